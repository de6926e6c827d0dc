import { describe, expect, it } from "@effect/vitest"
import { inRange, parseInstant, resolveRange, TimeRangeError } from "./time-range.js"

describe("parseInstant", () => {
  it("reads a date without offset as UTC midnight", () => {
    expect(parseInstant("2026-03-01")).toBe(Date.UTC(2026, 2, 1))
  })
  it("reads a date and time without offset as UTC", () => {
    expect(parseInstant("2026-03-01T23:30")).toBe(Date.UTC(2026, 2, 1, 23, 30))
    expect(parseInstant("2026-03-01 23:30:15")).toBe(Date.UTC(2026, 2, 1, 23, 30, 15))
  })
  it("honours an explicit offset", () => {
    expect(parseInstant("2026-03-01T01:00+02:00")).toBe(Date.UTC(2026, 1, 28, 23, 0))
    expect(parseInstant("2026-03-01T01:00Z")).toBe(Date.UTC(2026, 2, 1, 1, 0))
  })
  it("refuses what it cannot read, and impossible dates", () => {
    expect(parseInstant("yesterday")).toBeInstanceOf(TimeRangeError)
    expect(parseInstant("2026-02-30")).toBeInstanceOf(TimeRangeError)
    expect(parseInstant("03/01/2026")).toBeInstanceOf(TimeRangeError)
  })
})

describe("time ranges", () => {
  const range = resolveRange({ since: "2026-03-01", until: "2026-03-02", nowMs: 0 })
  if (range instanceof TimeRangeError) throw range

  it("since is inclusive, until is exclusive, at the exact boundaries", () => {
    expect(inRange(range, "2026-03-01T00:00:00.000Z")).toBe(true)
    expect(inRange(range, "2026-02-28T23:59:59.999Z")).toBe(false)
    expect(inRange(range, "2026-03-01T23:59:59.999Z")).toBe(true)
    expect(inRange(range, "2026-03-02T00:00:00.000Z")).toBe(false)
  })

  it("compares instants, whatever zone a timestamp was written in", () => {
    expect(inRange(range, "2026-03-02T00:30:00+01:00")).toBe(true)
    expect(inRange(range, "2026-03-01T00:30:00+01:00")).toBe(false)
  })

  it("an unknown timestamp never matches a bounded range but matches an open one", () => {
    expect(inRange(range, null)).toBe(false)
    expect(inRange(range, "not a time")).toBe(false)
    expect(inRange({ sinceMs: null, untilMs: null }, null)).toBe(true)
  })

  it("--days counts back from now; --days with --since, or until before since, is refused", () => {
    expect(resolveRange({ days: 3, nowMs: Date.UTC(2026, 2, 10) })).toEqual({
      sinceMs: Date.UTC(2026, 2, 7),
      untilMs: null
    })
    expect(resolveRange({ days: 3, since: "2026-03-01", nowMs: 0 })).toBeInstanceOf(TimeRangeError)
    expect(resolveRange({ since: "2026-03-02", until: "2026-03-01", nowMs: 0 })).toBeInstanceOf(TimeRangeError)
  })
})
