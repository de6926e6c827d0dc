import { describe, expect, it } from "@effect/vitest"
import { invalidQuery } from "./invalid-query.js"
import { parseInstant, TimeRangeError } from "./time-range.js"

describe("a date the daemon cannot read", () => {
  it("says the accepted forms once", () => {
    const error = parseInstant("yesterday")
    expect(error).toBeInstanceOf(TimeRangeError)
    const message = invalidQuery(error as TimeRangeError).message
    expect(message.match(/YYYY-MM-DD/g)?.length).toBe(2) // YYYY-MM-DD and YYYY-MM-DDTHH:MM, one list
    expect(message).toMatch(/^yesterday: expected /)
  })
})
