import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, TestClock } from "effect"
import { makeTempDir, withHistoryDb } from "./history-db.test-support.js"
import {
  FIRST_RETRY,
  keepRetryingSkippedImports,
  MAX_RETRY,
  readImportRetries,
  recordSkipped,
  retryDelay,
  retryDueImports
} from "./import-retry.js"

const signature = (path: string) => {
  const s = Fs.lstatSync(path)
  return Option.some({ size: s.size, mtime_ms: s.mtimeMs, ino: s.ino })
}

/** Lets the forked loop finish the pass the clock just woke it for (its SQLite calls are synchronous). */
/** One real turn of the event loop as well as the fibers': the file stats and SQLite reads the loop awaits finish. */
const turn = Effect.zipRight(
  Effect.yieldNow(),
  Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
)
/** Gives the loop time to act on the clock's new time (for checks that nothing happened). */
const settle = Effect.forEach(Array.from({ length: 100 }), () => turn, { discard: true })
/** Waits, over real turns with a generous bound, until the loop has done what the test expects next. */
const settleUntil = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 20_000 && !done(); i++) yield* turn
  })

describe("retrying skipped imports", () => {
  it("waits a minute, then twice as long each time, at most four hours", () => {
    expect([1, 2, 3, 4].map((n) => Duration.toMinutes(retryDelay(n)))).toEqual([1, 2, 4, 8])
    expect(Duration.toMillis(retryDelay(9))).toBe(Duration.toMillis(MAX_RETRY))
    expect(Duration.toMillis(retryDelay(50))).toBe(Duration.toMillis(MAX_RETRY))
    expect(Duration.toMillis(retryDelay(1))).toBe(Duration.toMillis(FIRST_RETRY))
  })

  it.scoped(
    "queues a skipped file on schedule, backs off while it keeps being skipped, and at once when it changed",
    () => {
      const dir = makeTempDir("blctx-retry-")
      const file = NodePath.join(dir, "rollout-crashy.jsonl")
      Fs.writeFileSync(file, "{}\n")
      return withHistoryDb(
        dir,
        Effect.gen(function* () {
          const queued: Array<{ readonly at: number; readonly paths: ReadonlyArray<string> }> = []
          let jobs = 0
          const submit = (paths: ReadonlyArray<string>) =>
            Effect.map(TestClock.currentTimeMillis, (at) => {
              queued.push({ at, paths })
              return `job-${++jobs}`
            })
          const minutes = () => queued.map((q) => q.at / 60_000)
          yield* recordSkipped(file, signature(file), "interrupted twice while reading it; skipped")
          const loop = yield* Effect.fork(keepRetryingSkippedImports(submit))
          yield* settle
          expect(queued).toEqual([])
          yield* TestClock.adjust(Duration.seconds(30))
          yield* settle
          expect(queued).toEqual([])
          yield* TestClock.adjust(Duration.seconds(30))
          yield* settleUntil(() => queued.length >= 1)
          expect(minutes()).toEqual([1])
          expect(queued[0]?.paths).toEqual([file])
          // Queued, not yet done: not queued again at the next looks.
          yield* TestClock.adjust(Duration.seconds(30))
          yield* settle
          expect(minutes()).toEqual([1])

          // Skipped again (the import was interrupted inside it twice more): two minutes this time.
          yield* recordSkipped(file, signature(file), "interrupted twice while reading it; skipped")
          const waiting = yield* readImportRetries(10)
          expect(waiting.total).toBe(1)
          expect(waiting.listed[0]).toMatchObject({ path: file, attempts: 2 })
          expect(Date.parse(waiting.listed[0]?.next_retry_at ?? "")).toBe(90_000 + 120_000)
          yield* TestClock.adjust(Duration.seconds(90))
          yield* settle
          expect(minutes()).toEqual([1])
          yield* TestClock.adjust(Duration.seconds(30))
          yield* settleUntil(() => queued.length >= 2)
          expect(minutes()).toEqual([1, 3.5])

          // The file changed: its backoff starts over and it is queued at the next look.
          Fs.appendFileSync(file, "{}\n")
          yield* TestClock.adjust(Duration.seconds(30))
          yield* settleUntil(() => queued.length >= 3)
          expect(minutes()).toEqual([1, 3.5, 4])
          yield* Fiber.interrupt(loop)
        })
      ).pipe(Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))))
    }
  )

  it.effect(
    "the schedule is durable: a new pass (a restarted daemon) finds what waits; a file gone is forgotten",
    () => {
      const dir = makeTempDir("blctx-retry-")
      const file = NodePath.join(dir, "rollout-crashy.jsonl")
      Fs.writeFileSync(file, "{}\n")
      return withHistoryDb(
        dir,
        Effect.gen(function* () {
          yield* recordSkipped(file, signature(file), "skipped")
          const submitted: Array<ReadonlyArray<string>> = []
          const submit = (paths: ReadonlyArray<string>) =>
            Effect.sync(() => {
              submitted.push(paths)
              return "job"
            })
          expect(yield* retryDueImports(submit)).toEqual([])
          yield* TestClock.adjust(FIRST_RETRY)
          expect(yield* retryDueImports(submit)).toEqual([file])
          Fs.rmSync(file)
          yield* TestClock.adjust(MAX_RETRY)
          expect(yield* retryDueImports(submit)).toEqual([])
          expect((yield* readImportRetries(10)).total).toBe(0)
        })
      ).pipe(Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))))
    }
  )
})
