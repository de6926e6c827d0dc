import { Headers } from "@effect/platform"
import type { Rpc } from "@effect/rpc"
import type { SuccessValue } from "@effect/rpc/RpcMiddleware"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import { Search } from "../rpc/history-protocol.js"
import { Ping } from "../rpc/protocol.js"
import { makeAdmission } from "./admission.js"

/** A call through the middleware to a handler that finishes when `release` is done. */
const through =
  (admission: Effect.Effect.Success<ReturnType<typeof makeAdmission>>) =>
  (rpc: Rpc.AnyWithProps, release: Deferred.Deferred<void>) =>
    admission({
      clientId: 1,
      rpc,
      payload: {},
      headers: Headers.empty,
      next: Deferred.await(release) as unknown as Effect.Effect<SuccessValue>
    })

describe("admission control", () => {
  it.effect("refuses the read past the bound at once with DaemonBusy; Ping still answers", () =>
    Effect.gen(function* () {
      const call = through(yield* makeAdmission(2))
      const held = yield* Deferred.make<void>()
      const open = yield* Deferred.make<void>()
      yield* Deferred.succeed(open, undefined)
      const running = yield* Effect.forEach([1, 2], () => Effect.fork(call(Search as Rpc.AnyWithProps, held)))
      yield* Effect.yieldNow()
      const refused = yield* Effect.exit(call(Search as Rpc.AnyWithProps, held))
      expect(Exit.isFailure(refused) && refused.cause._tag === "Fail" ? refused.cause.error : undefined).toMatchObject({
        _tag: "DaemonBusy",
        in_flight: 2,
        limit: 2
      })
      // Ping passes even now (it is never refused); so does a read once one in hand finished.
      expect(Exit.isSuccess(yield* Effect.exit(call(Ping as Rpc.AnyWithProps, open)))).toBe(true)
      yield* Deferred.succeed(held, undefined)
      yield* Effect.forEach(running, Fiber.join)
      expect(Exit.isSuccess(yield* Effect.exit(call(Search as Rpc.AnyWithProps, open)))).toBe(true)
    })
  )

  it.effect("an admitted read not answered within the wait limit is answered busy, and gives its place back", () =>
    Effect.gen(function* () {
      const admission = yield* makeAdmission(1, "2 seconds")
      const never = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(through(admission)(Search as Rpc.AnyWithProps, never))
      yield* TestClock.adjust("1999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined).toMatchObject({
        _tag: "DaemonBusy"
      })
      const open = yield* Deferred.make<void>()
      yield* Deferred.succeed(open, undefined)
      expect(Exit.isSuccess(yield* Effect.exit(through(admission)(Search as Rpc.AnyWithProps, open)))).toBe(true)
    })
  )

  it.effect("a read that fails or is interrupted gives its place back", () =>
    Effect.gen(function* () {
      const admission = yield* makeAdmission(1)
      const never = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(through(admission)(Search as Rpc.AnyWithProps, never))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const open = yield* Deferred.make<void>()
      yield* Deferred.succeed(open, undefined)
      expect(Exit.isSuccess(yield* Effect.exit(through(admission)(Search as Rpc.AnyWithProps, open)))).toBe(true)
    })
  )
})
