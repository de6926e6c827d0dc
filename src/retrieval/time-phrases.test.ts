import { describe, expect, it } from "vitest"
import { findTimePhrase, isTimeZone } from "./time-phrases.js"

// Date phrases read against a fixed now: Thursday 3 December 2026, 15:00 UTC (16:00 in Berlin,
// 07:00 in Los Angeles). Weeks start on Monday.
const NOW = Date.parse("2026-12-03T15:00:00Z")
const BERLIN = "Europe/Berlin"
const find = (query: string, timeZone = BERLIN, now = NOW) => findTimePhrase(query, now, timeZone)

describe("date phrases in a search query", () => {
  it("turn last week into Monday to Monday in the person's zone and leave the other words to rank", () => {
    expect(find("what did we do on the billing service last week?")).toEqual({
      phrase: "last week",
      since: "2026-11-22T23:00:00.000Z",
      until: "2026-11-29T23:00:00.000Z",
      rest: "what did we do on the billing service?"
    })
  })

  it("read relative days, weeks and months", () => {
    const range = (q: string, tz = BERLIN) => {
      const found = find(q, tz)
      return found === null ? null : [found.since, found.until]
    }
    expect(range("deploy fix yesterday")).toEqual(["2026-12-01T23:00:00.000Z", "2026-12-02T23:00:00.000Z"])
    expect(range("today's deploy")).toBeNull()
    expect(range("deploy today")).toEqual(["2026-12-02T23:00:00.000Z", "2026-12-03T23:00:00.000Z"])
    expect(range("this week ci")).toEqual(["2026-11-29T23:00:00.000Z", "2026-12-06T23:00:00.000Z"])
    expect(range("kafka this month")).toEqual(["2026-11-30T23:00:00.000Z", "2026-12-31T23:00:00.000Z"])
    expect(range("kafka last month")).toEqual(["2026-10-31T23:00:00.000Z", "2026-11-30T23:00:00.000Z"])
    expect(range("vat 3 days ago")).toEqual(["2026-11-29T23:00:00.000Z", "2026-11-30T23:00:00.000Z"])
    expect(range("vat two weeks ago")).toEqual(["2026-11-15T23:00:00.000Z", "2026-11-22T23:00:00.000Z"])
    expect(range("vat in the last 10 days")).toEqual(["2026-11-22T23:00:00.000Z", null])
    expect(range("vat past two weeks")).toEqual(["2026-11-18T23:00:00.000Z", null])
  })

  it("read weekdays, months and ISO days", () => {
    const range = (q: string) => {
      const found = find(q)
      return found === null ? null : [found.since, found.until]
    }
    // Thursday today: "on Monday" is this week's, "on Thursday" today, "last Thursday" a week ago.
    expect(range("what broke on Monday")).toEqual(["2026-11-29T23:00:00.000Z", "2026-11-30T23:00:00.000Z"])
    expect(range("what broke on Thursday")).toEqual(["2026-12-02T23:00:00.000Z", "2026-12-03T23:00:00.000Z"])
    expect(range("what broke last Thursday")).toEqual(["2026-11-25T23:00:00.000Z", "2026-11-26T23:00:00.000Z"])
    // October 2026 ends with the change from summer time (UTC+2) to winter time (UTC+1).
    expect(range("schema registry in October")).toEqual(["2026-09-30T22:00:00.000Z", "2026-10-31T23:00:00.000Z"])
    expect(range("schema registry in December 2025")).toEqual(["2025-11-30T23:00:00.000Z", "2025-12-31T23:00:00.000Z"])
    expect(range("pgbouncer since 2026-11-01")).toEqual(["2026-10-31T23:00:00.000Z", null])
    expect(range("pgbouncer before 2026-11-01")).toEqual([null, "2026-10-31T23:00:00.000Z"])
    expect(range("pgbouncer on 2026-10-13")).toEqual(["2026-10-12T22:00:00.000Z", "2026-10-13T22:00:00.000Z"])
    expect(range("pgbouncer since 2026-02-30")).toBeNull()
  })

  it("count days in the person's zone, not the machine's or UTC", () => {
    // 07:00 in Los Angeles on Thursday: yesterday is Wednesday there, from 08:00 UTC.
    expect(find("yesterday", "America/Los_Angeles")).toMatchObject({
      since: "2026-12-02T08:00:00.000Z",
      until: "2026-12-03T08:00:00.000Z"
    })
    // 00:30 on Friday in Tokyo is still Thursday in UTC: "today" is Tokyo's Friday.
    expect(find("today", "Asia/Tokyo", Date.parse("2026-12-03T15:30:00Z"))).toMatchObject({
      since: "2026-12-03T15:00:00.000Z",
      until: "2026-12-04T15:00:00.000Z"
    })
  })

  it("leave phrases in quotes and in code identifiers as words", () => {
    for (const query of [
      'grep "last week" in the logs',
      "the `yesterday` helper",
      "why is 'last week' in the report title",
      "last_week report",
      "lastWeek flag",
      "yesterday.ts tests",
      "src/today/index.ts",
      "--since-yesterday",
      "on-monday hook",
      "the #today channel"
    ]) {
      expect(find(query), query).toBeNull()
    }
  })

  it("read only the first phrase, and any case", () => {
    expect(find("Last Week vs yesterday")).toMatchObject({ phrase: "Last Week", rest: "vs yesterday" })
  })

  it("know a zone when it sees one", () => {
    expect(isTimeZone("Europe/Berlin")).toBe(true)
    expect(isTimeZone("Mars/Olympus")).toBe(false)
  })
})
