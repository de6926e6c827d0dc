import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import { inTurn } from "./daemon-session.js"

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

describe("inTurn", () => {
  it.effect("a call without a turn within the wait answers busy; one that has its turn is never cut short", () =>
    Effect.gen(function* () {
      const turn = inTurn(yield* Effect.makeSemaphore(1), "5 seconds")
      const release = yield* Deferred.make<void>()
      // Holds the one turn for 8 s (longer than the wait): it still finishes.
      const first = yield* Effect.fork(turn(Effect.as(Deferred.await(release), "first")))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(turn(Effect.succeed("second")))
      yield* TestClock.adjust("5 seconds")
      expect(failureOf(yield* Fiber.await(second))).toMatchObject({ _tag: "DaemonBusy" })
      const third = yield* Effect.fork(turn(Effect.succeed("third")))
      yield* TestClock.adjust("3 seconds")
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(first)).toBe("first")
      expect(yield* Fiber.join(third)).toBe("third")
    })
  )
})
