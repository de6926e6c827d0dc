import { describe, expect, it } from "vitest"
import { SearchRequest, SearchResponse } from "./contract.js"
import { applyTimePhrase, withTimeFilter } from "./search-time-filter.js"

// A search's date phrase against a fixed now (Thursday 3 December 2026, 15:00 UTC) in Berlin.
const NOW = Date.parse("2026-12-03T15:00:00Z")
const ZONE = "Europe/Berlin"
const request = (query: string, filters: SearchRequest["filters"] = {}) =>
  SearchRequest.make({ query, filters, limit: 10, offset: 0 })

describe("a search's date phrase", () => {
  it("becomes since and until, keeps the other filters, and leaves the ranked words", () => {
    const { request: run, filter } = applyTimePhrase(
      request("billing invoices last week", { project: "/home/dev/billing-service" }),
      NOW,
      ZONE
    )
    expect(run.query).toBe("billing invoices")
    expect(run.filters).toEqual({
      project: "/home/dev/billing-service",
      since: "2026-11-22T23:00:00.000Z",
      until: "2026-11-29T23:00:00.000Z"
    })
    expect(filter).toMatchObject({ phrase: "last week", applied: true, time_zone: ZONE, searched: "billing invoices" })
    expect(filter?.note).toBe(
      '"last week" read as a time filter, from 2026-11-23 00:00 to 2026-11-30 00:00 (Europe/Berlin): only results from then; searched for "billing invoices"'
    )
  })

  it("gives way to a since or until the request gave, searching the phrase as words", () => {
    for (const filters of [{ since: "2026-01-01" }, { until: "2026-12-01" }]) {
      const asked = request("billing last week", filters)
      const { request: run, filter } = applyTimePhrase(asked, NOW, ZONE)
      expect(run).toBe(asked)
      expect(filter).toMatchObject({ applied: false, searched: "billing last week" })
      expect(filter?.note).toContain("not read as a time filter")
    }
  })

  it("searches a query that was only a date phrase as written, filtered", () => {
    const { request: run, filter } = applyTimePhrase(request("yesterday"), NOW, ZONE)
    expect(run.query).toBe("yesterday")
    expect(run.filters.since).toBe("2026-12-01T23:00:00.000Z")
    expect(filter?.applied).toBe(true)
  })

  it("leaves a query without a phrase and its answer untouched", () => {
    const asked = request("`yesterday` helper")
    expect(applyTimePhrase(asked, NOW, ZONE)).toEqual({ request: asked, filter: undefined })
    const answer = new SearchResponse({
      query: "x",
      query_mode: "lexical",
      query_mode_reason: "",
      results: [],
      offset: 0,
      limit: 10,
      next_offset: null,
      truncated: false,
      returned_chars: 0
    })
    expect(withTimeFilter(answer, "x", undefined)).toBe(answer)
  })
})
