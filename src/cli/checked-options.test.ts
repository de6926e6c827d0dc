import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { RECENT_BOUNDS, SEARCH_BOUNDS } from "../domain/read-bounds.js"
import { boundedOption, choiceOption, parseBounded, rangeProblem, timeOption, timeProblem } from "./checked-options.js"
import { docText } from "./help.js"

describe("parseBounded", () => {
  it("takes a number within the bound", () => {
    expect(parseBounded("--limit", "5", SEARCH_BOUNDS.limit)).toEqual(Either.right(5))
    expect(parseBounded("--days", "0.5", RECENT_BOUNDS.days)).toEqual(Either.right(0.5))
  })

  it("names the option and its bound for a value out of it", () => {
    expect(parseBounded("--limit", "0", SEARCH_BOUNDS.limit)).toEqual(
      Either.left("--limit must be between 1 and 100 (got 0)")
    )
    expect(parseBounded("--offset", "-1", SEARCH_BOUNDS.offset)).toEqual(
      Either.left("--offset must be between 0 and 10,000 (got -1)")
    )
    expect(parseBounded("--days", "-1", RECENT_BOUNDS.days)).toEqual(
      Either.left("--days must be greater than 0 and at most 36,500 (got -1)")
    )
    expect(parseBounded("--offset", "-1", RECENT_BOUNDS.offset)).toEqual(
      Either.left("--offset must be at least 0 (got -1)")
    )
  })

  it("says what kind of number it takes for a value that is none", () => {
    expect(parseBounded("--limit", "abc", SEARCH_BOUNDS.limit)).toEqual(
      Either.left('--limit must be an integer between 1 and 100 (got "abc")')
    )
    expect(parseBounded("--limit", "2.5", SEARCH_BOUNDS.limit)).toEqual(
      Either.left('--limit must be an integer between 1 and 100 (got "2.5")')
    )
    expect(parseBounded("--days", "1e3", RECENT_BOUNDS.days)).toEqual(
      Either.left('--days must be a number greater than 0 and at most 36,500 (got "1e3")')
    )
  })
})

describe("times", () => {
  it("names the option and the accepted forms once", () => {
    expect(timeProblem("--since", "2026-03-01")).toBeUndefined()
    expect(timeProblem("--since", "yesterday")).toBe(
      '--since must be YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], optionally ending in Z or ±HH:MM (got "yesterday")'
    )
    expect(timeProblem("--until", "2026-02-30")).toBe('--until is not a real calendar date (got "2026-02-30")')
  })

  it("refuses an empty range", () => {
    expect(rangeProblem("2026-03-01", "2026-04-01")).toBeUndefined()
    expect(rangeProblem("2026-03-01", undefined)).toBeUndefined()
    expect(rangeProblem("2026-03-01", "2026-03-01")).toBe(
      "--until must be after --since (got --since 2026-03-01 --until 2026-03-01)"
    )
  })
})

describe("the options on a command line", () => {
  const probe = Command.make(
    "probe",
    {
      limit: boundedOption("limit", SEARCH_BOUNDS.limit, "How many."),
      agent: choiceOption("agent", ["codex", "claude"], "Whose."),
      since: timeOption("since", "From when.")
    },
    () => Effect.void
  )
  const parse = (args: ReadonlyArray<string>) =>
    Command.run(probe, { name: "probe", version: "0" })(["node", "probe", ...args]).pipe(
      Effect.flip,
      Effect.map((e) => (ValidationError.isValidationError(e) ? docText(e.error) : String(e))),
      Effect.provide(NodeContext.layer)
    )

  it.effect("fail with one message naming the option", () =>
    Effect.gen(function* () {
      expect(yield* parse(["--limit", "0", "--agent", "codex", "--since", "2026-01-01"])).toBe(
        "--limit must be between 1 and 100 (got 0)"
      )
      expect(yield* parse(["--limit", "5", "--agent", "bogus", "--since", "2026-01-01"])).toBe(
        '--agent must be one of codex, claude (got "bogus")'
      )
      expect(yield* parse(["--limit", "5", "--agent", "codex", "--since", "soon"])).toContain("--since must be")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
