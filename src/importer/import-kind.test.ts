import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Cause, type Context, Deferred, Duration, Effect, Exit, Fiber, Option, TestClock } from "effect"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { TokenizerError } from "../chunking/chunk-tokenizer.js"
import { EmbedError } from "../embedding/embedder.js"
import { JobId } from "../jobs/job.js"
import { TranscriptFileError, TranscriptFiles } from "../transcripts/transcript-files.js"
import { EmbeddingFailed } from "../vectors/import-errors.js"
import { type ImportServices, IndexingServices, wholeMessageChunking } from "../vectors/import-services.js"
import type { VectorIndexShape } from "../vectors/vector-index.js"
import { changeWhileRead } from "./changing-transcript-files.test-support.js"
import { makeTempDir, withHistoryDb, writeTranscript } from "./history-db.test-support.js"
import { FILE_STALL_LIMIT, makeImportKind } from "./import-kind.js"
import { FIRST_RETRY, readImportRetries } from "./import-retry.js"

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

type Indexing = Context.Tag.Service<IndexingServices>

/** Runs the import kind as the runner does, each commit a real transaction recorded in `committed`. */
const runImport = (
  paths: ReadonlyArray<string>,
  checkpoint?: unknown,
  committed: Array<unknown> = [],
  indexing: Indexing = NoModel
) =>
  Effect.gen(function* () {
    const kind = yield* makeImportKind()
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
  }).pipe(Effect.provideService(IndexingServices, indexing))

/** The same run, its exit kept: for imports that are expected to fail. */
const runImportExit = (
  paths: ReadonlyArray<string>,
  checkpoint?: unknown,
  committed: Array<unknown> = [],
  indexing: Indexing = NoModel
) => Effect.exit(runImport(paths, checkpoint, committed, indexing))

/** The typed failure of a failed run (a defect or an interruption fails the test). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("the import was expected to fail")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`not a typed failure: ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/**
 * Indexing with the fake model on a sqlite-vec index in the test database; `failWhen` makes
 * the model fail (or hang) on batches holding a text it matches.
 */
const withModel = (failWhen?: (text: string) => boolean, hang = false) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient) as SqliteClient.SqliteClient
    const vectors: VectorIndexShape = yield* makeSqliteVectorIndex(sql)
    const { embedder } = makeFakeEmbedder()
    const services: Context.Tag.Service<ImportServices> = {
      chunking: wholeMessageChunking,
      embedding: Option.some({
        fingerprint: embedder.fingerprint,
        embed: (texts: ReadonlyArray<string>) =>
          failWhen !== undefined && texts.some(failWhen)
            ? hang
              ? Effect.never
              : Effect.fail(new EmbedError({ folder: "/models/fake", message: "onnxruntime: out of memory" }))
            : embedder.embed(texts, "passage"),
        embedQuery: (text: string) => Effect.map(embedder.embed([text], "query"), (v) => v[0] ?? new Float32Array()),
        vectors
      })
    }
    const indexing: Indexing = { current: Effect.succeed(services), unavailable: Effect.succeed(Option.none()) }
    return { indexing, vectors, fingerprint: embedder.fingerprint }
  })

const sourcePaths = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ path: string }>`SELECT path FROM source_files ORDER BY id`
).pipe(Effect.map((rows) => rows.map((r) => r.path)))

const lastCheckpoint = (committed: ReadonlyArray<unknown>) => committed.at(-1) as { next_file: number } | undefined

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
        // The skip is kept for the daemon to try again: a minute from now, the first time.
        const waiting = yield* readImportRetries(10)
        expect(waiting.listed).toEqual([
          {
            path: poison,
            attempts: 1,
            next_retry_at: new Date(Duration.toMillis(FIRST_RETRY)).toISOString(),
            reason:
              "the import was interrupted 2 times while reading this file (the daemon stopped or crashed); skipped"
          }
        ])
        // A later import that reads it to the end clears it.
        yield* runImport([poison])
        expect((yield* readImportRetries(10)).total).toBe(0)
      })
    )
  )

  it.effect(
    "a file whose rows cannot be stored fails the job, typed; nothing of it is committed; a retry imports it",
    () =>
      withHistoryDb(
        dir,
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.text = 'ask beta'
                   BEGIN SELECT RAISE(ABORT, 'refused by test'); END`
          const before = session("1", "alpha")
          const refused = session("2", "beta")
          const after = session("3", "gamma")
          const committed: Array<unknown> = []
          const exit = yield* runImportExit([before, refused, after], undefined, committed)
          const error = failureOf(exit)
          expect(error._tag).toBe("HistoryStoreError")
          expect(error.message).toContain(`store the rows of ${refused}`)
          expect(error.message).toContain("refused by test")
          // The file before it is committed; the refused one is not, and the checkpoint stays before it.
          expect(lastCheckpoint(committed)?.next_file).toBe(1)
          expect(yield* texts).toEqual(["ask alpha", "answer alpha"])
          expect(yield* sourcePaths).toEqual([before])

          // Once the store accepts it, the same job resumes at that file and imports it.
          yield* sql`DROP TRIGGER refuse`
          const { outcome } = yield* runImport([before, refused, after], lastCheckpoint(committed))
          expect(outcome.state).toBe("completed")
          expect(outcome.counts).toMatchObject({ files_imported: 3 })
          expect(yield* texts).toEqual([
            "ask alpha",
            "answer alpha",
            "ask beta",
            "answer beta",
            "ask gamma",
            "answer gamma"
          ])
        })
      )
  )
})

describe("import job: the model, the tokenizer and the store are not the file's fault", () => {
  it.effect(
    "a failing embedder fails the job with EmbeddingFailed naming the model; a later run imports the file",
    () =>
      withHistoryDb(
        dir,
        Effect.gen(function* () {
          const first = session("1", "alpha")
          const target = session("2", "beta")
          const last = session("3", "gamma")
          const broken = yield* withModel((text) => text.includes("beta"))
          const committed: Array<unknown> = []
          const exit = yield* runImportExit([first, target, last], undefined, committed, broken.indexing)
          const error = failureOf(exit)
          expect(error).toBeInstanceOf(EmbeddingFailed)
          if (!(error instanceof EmbeddingFailed)) return
          expect(error.model).toBe(broken.fingerprint.label)
          expect(error.subject).toBe(target)
          expect(error.message).toContain(broken.fingerprint.label)
          expect(error.message).toContain("onnxruntime: out of memory")
          // Never "unreadable": the file is not counted at all, and the checkpoint stays before it.
          expect(JSON.stringify(committed)).not.toContain("files_unreadable")
          expect(lastCheckpoint(committed)?.next_file).toBe(1)
          expect(yield* sourcePaths).toEqual([first])
          expect(yield* texts).toEqual(["ask alpha", "answer alpha"])

          // A new run with a working model imports it (and the file already done stays as it is).
          const working = yield* withModel()
          const { outcome } = yield* runImport([first, target, last], undefined, [], working.indexing)
          expect(outcome.state).toBe("completed")
          expect(outcome.counts).toMatchObject({ files_unchanged: 1, files_imported: 2, vectors_added: 4 })
          expect(yield* sourcePaths).toEqual([first, target, last])
          expect(yield* working.vectors.count(working.fingerprint)).toBe(6)
        })
      )
  )

  it.effect("a failing tokenizer fails the job with ChunkingFailed naming the tokenizer", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const first = session("1", "alpha")
        const target = session("2", "beta")
        const indexing: Indexing = {
          current: Effect.succeed({
            chunking: {
              tokenizer: "test-tokenizer@1",
              chunkAll: (batch) =>
                batch.some((t) => t.includes("beta"))
                  ? Effect.fail(new TokenizerError({ path: "/models/tokenizer.json", message: "bad merges" }))
                  : wholeMessageChunking.chunkAll(batch)
            },
            embedding: Option.none()
          }),
          unavailable: Effect.succeed(Option.none())
        }
        const committed: Array<unknown> = []
        const error = failureOf(yield* runImportExit([first, target], undefined, committed, indexing))
        expect(error._tag).toBe("ChunkingFailed")
        expect(error.message).toContain("test-tokenizer@1")
        expect(error.message).toContain("bad merges")
        expect(error.message).toContain(target)
        expect(lastCheckpoint(committed)?.next_file).toBe(1)
        expect(yield* sourcePaths).toEqual([first])
      })
    )
  )

  it.effect("a model that stops answering fails the job after the stall limit, as the model's failure", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const target = session("1", "alpha")
        const hung = yield* withModel(() => true, true)
        const committed: Array<unknown> = []
        const fiber = yield* Effect.fork(runImportExit([target], undefined, committed, hung.indexing))
        for (let i = 0; i < Duration.toSeconds(FILE_STALL_LIMIT) + 30; i++) {
          yield* TestClock.adjust("1 second")
          yield* Effect.yieldNow()
        }
        const error = failureOf(yield* Fiber.join(fiber))
        expect(error._tag).toBe("EmbeddingFailed")
        expect(error.message).toContain(hung.fingerprint.label)
        expect(error.message).toContain("no progress for 2 minutes")
        expect(yield* sourcePaths).toEqual([])
      })
    )
  )
})

describe("import job: files that cannot be read", () => {
  const denied = (path: string) =>
    new TranscriptFileError({
      op: "open",
      path,
      code: "EACCES",
      message: `EACCES: permission denied, open '${path}'`,
      remediation: `You cannot read ${path}; check its owner and permissions.`
    })

  it.effect(
    "a file refused with EACCES is unreadable (permission denied), never missing; the others are imported",
    () =>
      withHistoryDb(
        dir,
        Effect.gen(function* () {
          const first = session("1", "alpha")
          const refused = session("2", "beta")
          const last = session("3", "gamma")
          const live = yield* TranscriptFiles
          const committed: Array<unknown> = []
          const { outcome } = yield* runImport([first, refused, last], undefined, committed).pipe(
            Effect.provideService(TranscriptFiles, {
              open: (path) => (path === refused ? Effect.fail(denied(path)) : live.open(path))
            })
          )
          expect(outcome.state).toBe("partial")
          expect(outcome.counts).toMatchObject({ files_imported: 2, files_unreadable: 1 })
          expect(outcome.counts?.files_missing).toBeUndefined()
          expect(outcome.note).toContain(`${refused}: permission denied (EACCES) on open`)
          expect(outcome.note).not.toMatch(/missing|does not exist/)
          // The reason is kept with the job's checkpoint too, so a resumed job still reports it.
          expect(committed.at(-1)).toMatchObject({
            problems: [{ path: refused, problem: expect.stringContaining("permission denied") }]
          })
          expect(yield* texts).toEqual(["ask alpha", "answer alpha", "ask gamma", "answer gamma"])
        })
      )
  )

  it.effect("a file that becomes shorter while it is read is unreadable, and nothing of it is stored", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const shrinking = session("1", "alpha")
        const good = session("2", "beta")
        const live = yield* TranscriptFiles
        const { outcome } = yield* runImport([shrinking, good]).pipe(
          Effect.provideService(TranscriptFiles, {
            open: (path) =>
              Effect.tap(live.open(path), () =>
                // Cut after the size was captured: the reads come back short of it.
                Effect.sync(() => {
                  if (path === shrinking) Fs.truncateSync(path, 40)
                })
              )
          })
        )
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({ files_imported: 1, files_unreadable: 1 })
        expect(outcome.note).toContain(`${shrinking}: could not be read: the file became shorter while it was read`)
        expect(yield* texts).toEqual(["ask beta", "answer beta"])
        expect(yield* sourcePaths).toEqual([good])
      })
    )
  )

  it.effect("a file rewritten in place while it is read is skipped, named; the next run imports its new content", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        // Tool output after the answer makes the file span several reads; written a minute ago.
        const output = (i: number) =>
          JSON.stringify({
            type: "response_item",
            payload: { type: "function_call_output", call_id: `c${i}`, output: "x".repeat(100 * 1024) }
          })
        const rewritten = session(
          "1",
          "alpha",
          Array.from({ length: 6 }, (_, i) => output(i))
        )
        const past = new Date(Date.now() - 60_000)
        Fs.utimesSync(rewritten, past, past)
        const good = session("2", "beta")
        const { files } = yield* changeWhileRead(rewritten, () =>
          Fs.writeFileSync(rewritten, Fs.readFileSync(rewritten, "utf8").replaceAll("alpha", "omega"), { flag: "r+" })
        )
        const { outcome } = yield* runImport([rewritten, good]).pipe(Effect.provideService(TranscriptFiles, files))
        expect(outcome.state).toBe("partial")
        expect(outcome.counts).toMatchObject({ files_imported: 1, files_unreadable: 1 })
        expect(outcome.note).toContain(`${rewritten}: rewritten while it was read: nothing of it was imported`)
        expect(yield* texts).toEqual(["ask beta", "answer beta"])

        const again = yield* runImport([rewritten, good])
        expect(again.outcome.state).toBe("completed")
        expect(again.outcome.counts).toMatchObject({ files_imported: 1, files_unchanged: 1 })
        expect(yield* texts).toEqual(["ask beta", "answer beta", "ask omega", "answer omega"])
      })
    )
  )
})
