import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, HashMap, Layer, Logger, Option, TestClock } from "effect"
import { QueryReads } from "../rpc/query-reads.js"
import { DAEMON_STARTUP_LIMIT } from "../service/start-bounds.js"
import { withinStartupLimit } from "./daemon.js"
import { inProcessDaemon } from "./daemon-core.test-support.js"

/** Records the startup steps the daemon logs as done, and resolves once `awaited` is among them. */
const stepRecorder = (awaited: string) => {
  const steps: Array<string> = []
  let reached = () => {}
  const reachedAwaited = new Promise<void>((resolve) => {
    reached = resolve
  })
  const logger = Logger.make(({ annotations }) => {
    Option.map(HashMap.get(annotations, "step"), (step) => {
      steps.push(String(step))
      if (step === awaited) reached()
    })
  })
  return { steps, reachedAwaited, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("the daemon's startup bound", () => {
  it.scoped("a query worker that never starts: startup fails at the bound, the log naming the steps done", () =>
    Effect.gen(function* () {
      const recorder = stepRecorder("writer database open")
      const release = yield* Deferred.make<void>()
      const neverStarts = Layer.effect(QueryReads, Effect.never)
      const startup = yield* Layer.build(withinStartupLimit(inProcessDaemon(release, { reads: neverStarts }))).pipe(
        Effect.provide(recorder.layer),
        Effect.flip,
        Effect.fork
      )
      // The writer database opens in real time; only then does the clock pass the bound.
      yield* Effect.promise(() => recorder.reachedAwaited)
      yield* TestClock.adjust(Duration.sum(DAEMON_STARTUP_LIMIT, Duration.millis(1)))
      const error = yield* Fiber.join(startup)
      expect(error).toMatchObject({
        _tag: "DaemonStartupError",
        reason: `startup did not finish within ${Duration.format(DAEMON_STARTUP_LIMIT)}`
      })
      expect(recorder.steps).toEqual(["writer database open"])
    })
  )

  it.scoped("a startup that finishes logs each step, the database and the workers before the rest", () =>
    Effect.gen(function* () {
      const recorder = stepRecorder("index judge and capture started")
      const release = yield* Deferred.make<void>()
      yield* Layer.build(withinStartupLimit(inProcessDaemon(release))).pipe(Effect.provide(recorder.layer))
      yield* Deferred.succeed(release, undefined)
      expect(new Set(recorder.steps.slice(0, 2))).toEqual(new Set(["writer database open", "query workers started"]))
      expect(recorder.steps.slice(2)).toEqual([
        "indexing services built",
        "job runner started",
        "index judge and capture started"
      ])
    })
  )
})
