import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { startedOnce } from "./started-once.js"

describe("startedOnce", () => {
  it.effect("starts once for callers at the same time, and keeps what it made", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      let starts = 0
      const gate = yield* Deferred.make<void>()
      const get = startedOnce(
        Effect.zipRight(
          Deferred.await(gate),
          Effect.sync(() => ++starts)
        ),
        scope
      )
      const callers = yield* Effect.all([get, get, get], { concurrency: "unbounded" }).pipe(Effect.fork)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(callers)).toEqual([1, 1, 1])
      expect(yield* get).toBe(1)
      expect(starts).toBe(1)
    })
  )

  it.effect("a caller that gives up leaves the start running, and the next caller gets its value", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      let starts = 0
      let finished = 0
      const gate = yield* Deferred.make<void>()
      const get = startedOnce(
        Effect.gen(function* () {
          starts++
          yield* Deferred.await(gate)
          finished++
          return "pool"
        }),
        scope
      )
      const first = yield* Effect.fork(get)
      // Given up once the start is under way.
      while (starts === 0) yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* get).toBe("pool")
      expect([starts, finished]).toEqual([1, 1])
    })
  )

  it.effect("forgets a failed start, so the next caller starts again", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      let starts = 0
      const get = startedOnce(
        Effect.suspend(() => (++starts === 1 ? Effect.fail("no worker") : Effect.succeed(starts))),
        scope
      )
      expect(yield* Effect.flip(get)).toBe("no worker")
      expect(yield* get).toBe(2)
      expect(yield* get).toBe(2)
    })
  )

  it.effect("gives what it made the scope: closing the scope releases it", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      let released = false
      const get = startedOnce(
        Effect.acquireRelease(Effect.succeed("pool"), () =>
          Effect.sync(() => {
            released = true
          })
        ),
        scope
      )
      expect(yield* get).toBe("pool")
      expect(released).toBe(false)
      yield* Scope.close(scope, Exit.void)
      expect(released).toBe(true)
    })
  )
})
