import { describe, expect, it } from "@effect/vitest"
import { Data, Deferred, Effect, Exit, Fiber, Ref, Scope, TestClock } from "effect"
import { makeIdleRecycler } from "./idle-recycler.js"

class OpenFailed extends Data.TaggedError("OpenFailed")<{ readonly attempt: number }> {}

/**
 * A resource that records its life: each open gives the next number, each close is logged.
 * `failing` makes opens fail; `gate`, when set, holds the next open until it is completed.
 */
const makeFake = Effect.gen(function* () {
  const events = yield* Ref.make<ReadonlyArray<string>>([])
  const opened = yield* Ref.make(0)
  const failing = yield* Ref.make(false)
  const gate = yield* Ref.make<Deferred.Deferred<void> | undefined>(undefined)
  const log = (event: string) => Ref.update(events, (all) => [...all, event])
  const open = Effect.gen(function* () {
    const n = yield* Ref.updateAndGet(opened, (x) => x + 1)
    const held = yield* Ref.getAndSet(gate, undefined)
    if (held !== undefined) yield* Deferred.await(held)
    if (yield* Ref.get(failing)) {
      yield* log(`open ${n} failed`)
      return yield* new OpenFailed({ attempt: n })
    }
    yield* log(`open ${n}`)
    yield* Effect.addFinalizer(() => log(`close ${n}`))
    return n
  })
  return { events: Ref.get(events), failing, gate, open }
})

/** Lets forked fibers run up to their next sleep or wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)
const IDLE = "10 minutes"

describe("makeIdleRecycler", () => {
  it.scoped("opens once, and never reopens for uses that do not grow it", () =>
    Effect.gen(function* () {
      const fake = yield* makeFake
      const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })
      expect(yield* recycler.use(false, Effect.succeed)).toBe(1)
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(yield* recycler.use(false, Effect.succeed)).toBe(1)
      expect(yield* fake.events).toEqual(["open 1"])
    })
  )

  it.scoped("closes, then opens again, once idle after a use that grows it", () =>
    Effect.gen(function* () {
      const fake = yield* makeFake
      const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })
      expect(yield* recycler.use(true, Effect.succeed)).toBe(1)
      yield* settle
      yield* TestClock.adjust("9 minutes")
      yield* settle
      expect(yield* fake.events).toEqual(["open 1"])
      yield* TestClock.adjust("1 minute")
      yield* settle
      expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2"])
      expect(yield* recycler.use(false, Effect.succeed)).toBe(2)
      // Idle again without growing: no further reopening.
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2"])
    })
  )

  it.scoped("starts the idle time again at each growing use, and only once the last concurrent one ends", () =>
    Effect.gen(function* () {
      const fake = yield* makeFake
      const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })
      yield* recycler.use(true, Effect.succeed)
      yield* settle
      yield* TestClock.adjust("6 minutes")
      yield* recycler.use(true, Effect.succeed)
      yield* settle
      yield* TestClock.adjust("6 minutes")
      yield* settle
      expect(yield* fake.events).toEqual(["open 1"])
      // A long growing use outlives the idle time of a short one that ended meanwhile.
      const release = yield* Deferred.make<void>()
      const long = yield* Effect.fork(recycler.use(true, () => Deferred.await(release)))
      yield* settle
      yield* recycler.use(true, Effect.succeed)
      yield* settle
      yield* TestClock.adjust("30 minutes")
      yield* settle
      expect(yield* fake.events).toEqual(["open 1"])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(long)
      yield* settle
      yield* TestClock.adjust(IDLE)
      yield* settle
      expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2"])
    })
  )

  it.scoped("makes a use that arrives during the reopening wait for it and get the new resource", () =>
    Effect.gen(function* () {
      const fake = yield* makeFake
      const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })
      yield* recycler.use(true, Effect.succeed)
      const gate = yield* Deferred.make<void>()
      yield* Ref.set(fake.gate, gate)
      yield* settle
      yield* TestClock.adjust(IDLE)
      yield* settle
      expect(yield* fake.events).toEqual(["open 1", "close 1"])
      const waiting = yield* Effect.fork(recycler.use(false, Effect.succeed))
      yield* settle
      expect(waiting.unsafePoll()).toBeNull()
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(waiting)).toBe(2)
      expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2"])
    })
  )

  it.scoped("waits for a use in progress before closing the resource it uses", () =>
    Effect.gen(function* () {
      const fake = yield* makeFake
      const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })
      yield* recycler.use(true, Effect.succeed)
      const release = yield* Deferred.make<void>()
      const reading = yield* Effect.fork(
        recycler.use(false, (n) => Effect.zipRight(Deferred.await(release), Effect.succeed(n)))
      )
      yield* settle
      yield* TestClock.adjust(IDLE)
      yield* settle
      expect(yield* fake.events).toEqual(["open 1"])
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(reading)).toBe(1)
      yield* settle
      expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2"])
    })
  )

  it.scoped(
    "after a failed reopening, the next use opens it again, and fails with the opening's error if it cannot",
    () =>
      Effect.gen(function* () {
        const fake = yield* makeFake
        const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })
        yield* recycler.use(true, Effect.succeed)
        yield* Ref.set(fake.failing, true)
        yield* settle
        yield* TestClock.adjust(IDLE)
        yield* settle
        expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2 failed"])
        const failed = yield* Effect.exit(recycler.use(false, Effect.succeed))
        expect(failed).toEqual(Exit.fail(new OpenFailed({ attempt: 3 })))
        yield* Ref.set(fake.failing, false)
        expect(yield* recycler.use(false, Effect.succeed)).toBe(4)
        expect(yield* fake.events).toEqual(["open 1", "close 1", "open 2 failed", "open 3 failed", "open 4"])
      })
  )

  it.effect(
    "fails as its first opening does, and closing its scope closes the resource and any pending reopening",
    () =>
      Effect.gen(function* () {
        const fake = yield* makeFake
        yield* Ref.set(fake.failing, true)
        const first = yield* Effect.exit(Effect.scoped(makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" })))
        expect(first).toEqual(Exit.fail(new OpenFailed({ attempt: 1 })))
        yield* Ref.set(fake.failing, false)
        const scope = yield* Scope.make()
        const recycler = yield* makeIdleRecycler(fake.open, { idle: IDLE, name: "fake" }).pipe(Scope.extend(scope))
        yield* recycler.use(true, Effect.succeed)
        yield* settle
        yield* Scope.close(scope, Exit.void)
        yield* TestClock.adjust("1 hour")
        yield* settle
        expect(yield* fake.events).toEqual(["open 1 failed", "open 2", "close 2"])
      })
  )
})
