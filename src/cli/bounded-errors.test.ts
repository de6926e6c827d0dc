import { describe, expect, it } from "@effect/vitest"
import { Console, Effect } from "effect"
import { boundErrorText, withBoundedErrors } from "./bounded-errors.js"

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
const HUGE = `${TOKEN}${"z".repeat(5_000)}`

describe("error text on stderr", () => {
  it("quotes a long quoted value (as @effect/cli words it) shortly and redacted", () => {
    const text = boundErrorText(`'${HUGE}' is not a integer`)
    expect(text.length).toBeLessThan(120)
    expect(text).not.toContain("ghp_")
    expect(text).toContain("is not a integer")
    expect(text).toContain("5,040 characters")
  })

  it("keeps short lines as they are, redacted, and cuts any line at 1,000 characters", () => {
    expect(boundErrorText("blctx: give a search query\nsecond line")).toBe("blctx: give a search query\nsecond line")
    expect(boundErrorText(`token ${TOKEN}`)).toBe("token [REDACTED:github_token]")
    const cut = boundErrorText(`path /${"p".repeat(20_000)}`)
    expect(cut.length).toBeLessThan(1_100)
    expect(cut).toContain("20,006 characters")
  })

  it.effect("bounds what goes through Console.error, and leaves Console.log alone", () =>
    Effect.gen(function* () {
      const errors: Array<unknown> = []
      const logs: Array<unknown> = []
      const recording = yield* Console.consoleWith((c) =>
        Effect.succeed({
          ...c,
          error: (...args: ReadonlyArray<unknown>) => Effect.sync(() => errors.push(...args)),
          log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => logs.push(...args))
        })
      )
      yield* Effect.all([Console.error(`'${HUGE}' is not a integer`), Console.log(HUGE)]).pipe(
        withBoundedErrors,
        Console.withConsole(recording)
      )
      expect(String(errors[0]).length).toBeLessThan(120)
      expect(logs).toEqual([HUGE])
    })
  )
})
