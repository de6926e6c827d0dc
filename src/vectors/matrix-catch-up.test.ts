import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Ref, Scope, TestClock } from "effect"
import { keepMatrixCurrent } from "./matrix-catch-up.js"

describe("keepMatrixCurrent", () => {
  it.effect("catches up at once and then every 5 seconds, past a failed catch-up, until its scope closes", () =>
    Effect.gen(function* () {
      const runs = yield* Ref.make(0)
      // The second catch-up fails (a locked database, say): the loop goes on.
      const warm = Ref.updateAndGet(runs, (n) => n + 1).pipe(
        Effect.flatMap((n) => (n === 2 ? Effect.fail("database is locked") : Effect.void))
      )
      const scope = yield* Scope.make()
      yield* keepMatrixCurrent(warm).pipe(Scope.extend(scope))
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(runs)).toBe(1)
      yield* TestClock.adjust("4 seconds")
      expect(yield* Ref.get(runs)).toBe(1)
      yield* TestClock.adjust("1 seconds")
      expect(yield* Ref.get(runs)).toBe(2)
      yield* TestClock.adjust("10 seconds")
      expect(yield* Ref.get(runs)).toBe(4)
      yield* Scope.close(scope, Exit.void)
      yield* TestClock.adjust("1 minute")
      expect(yield* Ref.get(runs)).toBe(4)
    })
  )

  it.effect("a catch-up in progress when the scope closes is interrupted, not waited for", () =>
    Effect.gen(function* () {
      const started = yield* Ref.make(false)
      const scope = yield* Scope.make()
      yield* keepMatrixCurrent(Ref.set(started, true).pipe(Effect.zipRight(Effect.never))).pipe(Scope.extend(scope))
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(started)).toBe(true)
      // Waiting for it would never end (the test's own time limit would fail it).
      yield* Scope.close(scope, Exit.void)
    })
  )
})
