import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { makePrimaryFirst } from "./primary-first.js"

/** A reader that records each read and answers when its gate opens. */
const reader = (name: string, log: Array<string>) => ({
  read: (what: string, gate?: Deferred.Deferred<void>) =>
    Effect.gen(function* () {
      log.push(`${name}:${what}`)
      if (gate !== undefined) yield* Deferred.await(gate)
      return `${name}:${what}`
    })
})

describe("primary-first routing", () => {
  it.effect("sends any read to the primary while it is free", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const route = makePrimaryFirst(reader("primary", log), Effect.succeed(reader("overflow", log)))
      expect(yield* route.onAny((r) => r.read("recent"))).toBe("primary:recent")
      expect(yield* route.onAny((r) => r.read("status"))).toBe("primary:status")
    })
  )

  it.effect("sends any read to the overflow pool while the primary is busy, and searches still to the primary", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const route = makePrimaryFirst(reader("primary", log), Effect.succeed(reader("overflow", log)))
      const gate = yield* Deferred.make<void>()
      const long = yield* Effect.fork(route.onAny((r) => r.read("export", gate)))
      yield* Effect.yieldNow()
      expect(yield* route.onAny((r) => r.read("status"))).toBe("overflow:status")
      const search = yield* Effect.fork(route.onPrimary((r) => r.read("search")))
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(long)).toBe("primary:export")
      expect(yield* Fiber.join(search)).toBe("primary:search")
      expect(yield* route.onAny((r) => r.read("recent"))).toBe("primary:recent")
    })
  )

  it.effect("frees the primary when a read fails or is interrupted", () =>
    Effect.gen(function* () {
      const route = makePrimaryFirst("primary", Effect.succeed("overflow"))
      const failed = yield* Effect.exit(route.onPrimary(() => Effect.fail("boom")))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* route.onAny((name) => Effect.succeed(name))).toBe("primary")
      const stuck = yield* Effect.fork(route.onPrimary(() => Effect.never))
      yield* Effect.yieldNow()
      expect(yield* route.onAny((name) => Effect.succeed(name))).toBe("overflow")
      yield* Fiber.interrupt(stuck)
      expect(yield* route.onAny((name) => Effect.succeed(name))).toBe("primary")
    })
  )
})
