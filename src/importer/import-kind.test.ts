import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option, TestClock } from "effect"
import { JobId } from "../jobs/job.js"
import { TranscriptFiles } from "../transcripts/transcript-files.js"
import { makeTempDir, withHistoryDb, writeTranscript } from "./history-db.test-support.js"
import { FILE_STALL_LIMIT, makeImportKind } from "./import-kind.js"
import { IndexingServices, wholeMessageChunking } from "./import-services.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-import-kind-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const NoModel = {
  current: Effect.succeed({ chunking: wholeMessageChunking, embedding: Option.none() }),
  unavailable: Effect.succeed(Option.none())
}

/** A small session: one request and its final answer, with the given words in both. */
const session = (name: string, words: string, extra: ReadonlyArray<string> = []) => {
  const path = NodePath.join(dir, `${name}.jsonl`)
  writeTranscript(path, [
    { type: "session_meta", payload: { id: `00000000-0000-7000-8000-${name.padStart(12, "0")}`, cwd: "/p" } },
    { type: "event_msg", payload: { type: "user_message", message: `ask ${words}` } },
    { type: "event_msg", payload: { type: "agent_message", message: `answer ${words}`, phase: "final_answer" } }
  ])
  if (extra.length > 0) Fs.appendFileSync(path, `${extra.join("\n")}\n`)
  return path
}

const deepLine = `{"type":"event_msg","payload":${"[".repeat(5_000)}${"]".repeat(5_000)}}`

/** Runs the import kind as the runner does, each commit a real transaction recorded in `committed`. */
const runImport = (paths: ReadonlyArray<string>, checkpoint?: unknown, committed: Array<unknown> = []) =>
  Effect.gen(function* () {
    const kind = yield* makeImportKind
    const sql = yield* SqlClient.SqlClient
    const outcome = yield* kind.run(
      JSON.stringify({ paths }),
      Option.fromNullable(checkpoint === undefined ? undefined : JSON.stringify(checkpoint)),
      {
        jobId: JobId.make("5d2b8f8e-3c1a-4f7e-9b2d-1a2b3c4d5e6f"),
        commit: <E>(work: Effect.Effect<void, E, SqlClient.SqlClient>, next: { readonly checkpoint: string }) =>
          (
            sql.withTransaction(Effect.provideService(work, SqlClient.SqlClient, sql)).pipe(
              Effect.catchIf(
                (e): e is SqlError => e instanceof SqlError,
                (e) => Effect.die(e)
              )
            ) as Effect.Effect<void, E>
          ).pipe(
            Effect.tap(() => {
              committed.push(JSON.parse(next.checkpoint))
            })
          )
      }
    )
    return { outcome }
  }).pipe(Effect.provideService(IndexingServices, NoModel))

const texts = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ text: string }>`SELECT text FROM messages ORDER BY id`
).pipe(Effect.map((rows) => rows.map((r) => r.text)))

describe("import job on hostile input", () => {
  it.effect("a too-deep line, a FIFO and a missing file never fail the job; every good line is imported", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const first = session("1", "alpha")
        const deep = session("2", "beta", [deepLine])
        const fifo = NodePath.join(dir, "fifo.jsonl")
        execFileSync("mkfifo", [fifo])
        const last = session("3", "gamma")
        const { outcome } = yield* runImport([first, deep, fifo, NodePath.join(dir, "gone.jsonl"), last])
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({
          files_imported: 3,
          files_unreadable: 1,
          files_missing: 1,
          parse_errors: 1
        })
        expect(yield* texts).toEqual([
          "ask alpha",
          "answer alpha",
          "ask beta",
          "answer beta",
          "ask gamma",
          "answer gamma"
        ])
        expect(outcome.note).toContain(`${fifo}: is a FIFO (named pipe), not a regular file`)
        expect(outcome.note).toContain(`${deep}: unreadable lines: 4 (too_deep)`)
      })
    )
  )

  it.effect("the note names the first five files with a problem and counts the rest", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const gone = Array.from({ length: 7 }, (_, i) => NodePath.join(dir, `gone-${i}.jsonl`))
        const { outcome } = yield* runImport(gone)
        expect(outcome.counts).toMatchObject({ files_missing: 7 })
        for (const path of gone.slice(0, 5)) expect(outcome.note).toContain(`${path}: `)
        expect(outcome.note).not.toContain(gone[5])
        expect(outcome.note).toMatch(/; and 2 more files$/)
      })
    )
  )

  it.effect("a defect while reading one file is that file's failure, with its reason; the job goes on", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const bad = session("1", "alpha")
        const good = session("2", "beta")
        const live = yield* TranscriptFiles
        const { outcome } = yield* runImport([bad, good]).pipe(
          Effect.provideService(TranscriptFiles, {
            open: (path) =>
              Effect.map(live.open(path), (handle) =>
                path === bad
                  ? { ...handle, readInto: () => Effect.die(new RangeError("Maximum call stack size exceeded")) }
                  : handle
              )
          })
        )
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({ files_imported: 1, files_unreadable: 1 })
        expect(outcome.note).toContain(`${bad}: could not be imported: RangeError: Maximum call stack size exceeded`)
        expect(yield* texts).toEqual(["ask beta", "answer beta"])
      })
    )
  )

  it.effect("a file whose reads never return is given up once nothing progressed for the stall limit", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const stuck = session("1", "alpha")
        const good = session("2", "beta")
        const live = yield* TranscriptFiles
        const reading = yield* Deferred.make<void>()
        const hang = Effect.zipRight(Deferred.succeed(reading, undefined), Effect.never)
        const committed: Array<unknown> = []
        const fiber = yield* Effect.fork(
          runImport([stuck, good], undefined, committed).pipe(
            Effect.provideService(TranscriptFiles, {
              open: (path) =>
                Effect.map(live.open(path), (handle) =>
                  path === stuck ? { ...handle, read: () => hang, readInto: () => hang } : handle
                )
            })
          )
        )
        yield* Deferred.await(reading)
        // The test clock moves only when told to: step it until the stuck file's skip is committed,
        // and no further, so the next file never sees the clock move.
        const skipped = () => committed.some((c) => (c as { next_file: number }).next_file === 1)
        const steps = Duration.toSeconds(FILE_STALL_LIMIT) * 10
        for (let i = 0; i < steps && !skipped(); i++) {
          yield* TestClock.adjust("1 second")
          yield* Effect.yieldNow()
        }
        expect(skipped()).toBe(true)
        const { outcome } = yield* Fiber.join(fiber)
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({ files_imported: 1, files_unreadable: 1 })
        expect(outcome.note).toContain(`${stuck}: no progress for 2 minutes`)
        expect(yield* texts).toEqual(["ask beta", "answer beta"])
      })
    )
  )

  it.effect("a resumed job skips the file at which two attempts in a row were interrupted", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const done = session("1", "alpha")
        const poison = session("2", "beta")
        const after = session("3", "gamma")
        // An attempt that started at file 1 was interrupted there once: that may have been a restart,
        // so the next attempt tries the file again, and is interrupted there too.
        const interrupted = { next_file: 1, counts: { files_imported: 1 }, started_at_file: { file: 1, attempts: 1 } }
        const committed: Array<unknown> = []
        const second = yield* runImport([done, poison, after], interrupted, committed).pipe(
          Effect.provideService(TranscriptFiles, { open: () => Effect.interrupt }),
          Effect.exit
        )
        expect(second._tag).toBe("Failure")
        expect(committed).toEqual([{ ...interrupted, started_at_file: { file: 1, attempts: 2 } }])
        const { outcome } = yield* runImport([done, poison, after], committed[0])
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({ files_imported: 2, files_unreadable: 1 })
        expect(outcome.note).toContain(`${poison}: the import was interrupted 2 times while reading this file`)
        expect(yield* texts).toEqual(["ask gamma", "answer gamma"])
      })
    )
  )

  it.effect("a file whose rows cannot be stored is recorded as such, and the next file is imported", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.text = 'ask alpha'
                   BEGIN SELECT RAISE(ABORT, 'refused by test'); END`
        const refused = session("1", "alpha")
        const good = session("2", "beta")
        const { outcome } = yield* runImport([refused, good])
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({ files_imported: 1, files_unreadable: 1 })
        expect(outcome.counts?.messages_added).toBe(2)
        expect(outcome.note).toContain(`${refused}: could not be stored`)
        expect(yield* texts).toEqual(["ask beta", "answer beta"])
      })
    )
  )
})
