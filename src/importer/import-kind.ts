import * as NodePath from "node:path"
import type { SqlClient } from "@effect/sql"
import { type Context, Data, Duration, Effect, Option, Ref, Schema } from "effect"
import { BoundedId, BoundedPath } from "../domain/bounded-text.js"
import { SafeFs } from "../fs/safe-fs.js"
import { JobCounts } from "../jobs/job.js"
import { type JobContext, type JobKind, type JobOutcome, registerJobKind } from "../jobs/job-kind.js"
import type { TranscriptFiles } from "../transcripts/transcript-files.js"
import { ChunkingFailed, EmbeddingFailed, HistoryStoreError, type ImportFailure } from "../vectors/import-errors.js"
import { ImportServices, IndexingServices } from "../vectors/import-services.js"
import { type FileReport, type PreparedFile, type PrepareStage, prepareFile, unreadableFile } from "./import-file.js"
import { clearRetry, recordSkipped } from "./import-retry.js"

const AbsolutePath = BoundedPath.pipe(
  Schema.filter((p) => NodePath.isAbsolute(p), { message: () => "paths must be absolute" })
)

export const ImportParams = Schema.Struct({
  /** Transcripts to import, in order (newest first for the installer's history_index). */
  paths: Schema.Array(AbsolutePath).pipe(Schema.minItems(1), Schema.maxItems(100_000)),
  /** Who asked: `cli`, `history_index`, ... (shown in index-status). */
  origin: Schema.optionalWith(BoundedId, { default: () => "cli" })
})
export type ImportParams = typeof ImportParams.Type

/**
 * A file is given up when its import makes no progress for this long: nothing read, chunked or
 * embedded. Tied to progress rather than to the file's total time, so a huge file that keeps
 * reading is never cut off, while a read that never returns (a hung mount, a device) is.
 */
export const FILE_STALL_LIMIT = Duration.minutes(2)

/**
 * A resumed job skips the file at which this many attempts in a row started and were stopped
 * (a crash, a kill, a restart) before finishing it: a file that brings the daemon down must not
 * stop every later file for good. One interruption is not enough, since it may have been a restart.
 */
export const MAX_INTERRUPTED_ATTEMPTS = 2

/** Files named with their problem in the checkpoint and the job's note; the rest are counted. */
const MAX_PROBLEMS = 5

const Problem = Schema.Struct({ path: Schema.String, problem: Schema.String })
type Problem = typeof Problem.Type

/** The next file to import, and the counts of the files already committed. */
const ImportCheckpoint = Schema.Struct({
  next_file: Schema.Int,
  counts: JobCounts,
  /** Where the current attempt started, and how many attempts in a row started there. */
  started_at_file: Schema.optional(Schema.Struct({ file: Schema.Int, attempts: Schema.Int })),
  /** Files not wholly imported so far, and why (the first few), and how many more there were. */
  problems: Schema.optional(Schema.Array(Problem)),
  more_problems: Schema.optional(Schema.Int)
})
type ImportCheckpoint = typeof ImportCheckpoint.Type

/** Files that make a job `partial`: not everything asked for is in the index. */
const INCOMPLETE = ["unclassified", "files_conflict", "files_missing", "files_unreadable"]

/** No progress for the stall limit, and what the file's import was doing then. */
class FileStalled extends Data.TaggedError("FileStalled")<{ readonly stage: PrepareStage; readonly limit: string }> {}

const add = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

const inWords = (d: Duration.Duration): string => {
  const seconds = Math.round(Duration.toSeconds(d))
  return seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}` : `${seconds} seconds`
}

/** Why a file is not wholly in the index, or undefined when it is. */
const problemOf = (report: FileReport): string | undefined =>
  report.status === "unreadable" || report.status === "missing" || report.status === "conflict"
    ? (report.note ?? report.status)
    : report.problem

/** A skipped file's size, mtime and inode, when it can be looked at: a change resets its retry backoff. */
const signatureOf = (path: string) =>
  Effect.flatMap(SafeFs, (fs) => fs.lstat(path)).pipe(
    Effect.map(Option.map((e) => ({ size: e.size, mtime_ms: e.mtimeMs, ino: e.ino }))),
    Effect.orElseSucceed(() => Option.none<{ size: number; mtime_ms: number; ino: number }>())
  )

/** How the import kind is built: nothing in the product; tests compose a hold here. */
export interface ImportKindOptions {
  /**
   * Run before each file is read, after the attempt's start is committed and outside the stall
   * watch: tests compose a pause here to keep an import inside a file while they kill the daemon.
   */
  readonly holdEachFile?: (path: string) => Effect.Effect<void>
}

/** How often the stall watch looks at a file's progress. */
const STALL_CHECK = Duration.seconds(10)

/**
 * Fails once `progress` (a counter the work bumps) has not moved at any check for `limit`, saying
 * at which stage. Counting checks rather than comparing clock times means a machine that was
 * suspended, or a clock set forward, cannot make a file look stuck.
 */
const stallWatch = (progress: Ref.Ref<number>, stage: Ref.Ref<PrepareStage>, limit: Duration.Duration) =>
  Effect.gen(function* () {
    const checks = Math.max(1, Math.ceil(Duration.toMillis(limit) / Duration.toMillis(STALL_CHECK)))
    let seen = yield* Ref.get(progress)
    let quiet = 0
    while (quiet < checks) {
      yield* Effect.sleep(STALL_CHECK)
      const now = yield* Ref.get(progress)
      quiet = now === seen ? quiet + 1 : 0
      seen = now
    }
    return yield* new FileStalled({ stage: yield* Ref.get(stage), limit: inWords(limit) })
  })

const noteOf = (problems: ReadonlyArray<Problem>, more: number): string | undefined => {
  if (problems.length === 0) return undefined
  const listed = problems.map((p) => `${p.path}: ${p.problem}`).join("; ")
  return `not wholly imported: ${listed}${more > 0 ? `; and ${more} more file${more === 1 ? "" : "s"}` : ""}`
}

/** The services a file's import is given: those the import kind was built with. */
type ImportNeeds = TranscriptFiles | SafeFs | IndexingServices

type ImportKindType = JobKind<
  ImportParams,
  typeof ImportParams.Encoded,
  ImportCheckpoint,
  typeof ImportCheckpoint.Encoded,
  ImportFailure
>

/**
 * What a stall means, by the stage it stopped in: while reading it is the file's problem; while
 * chunking or embedding it is the tokenizer's or the model's, and fails the job.
 */
const stalledFile =
  (path: string, services: typeof ImportServices.Service) =>
  (stalled: FileStalled): Effect.Effect<PreparedFile, ImportFailure> => {
    const why = `no progress for ${stalled.limit}`
    switch (stalled.stage) {
      case "reading":
        return Effect.succeed(unreadableFile(path, `${why} (nothing read); skipped`))
      case "chunking":
        return Effect.fail(ChunkingFailed.stalled(services.chunking.tokenizer, path, stalled.limit))
      case "embedding":
        return Effect.fail(
          EmbeddingFailed.stalled(
            Option.match(services.embedding, { onNone: () => "(none)", onSome: (e) => e.fingerprint.label }),
            path,
            stalled.limit
          )
        )
    }
  }

/** One file, prepared under the stall watch. */
const prepareBounded = (
  context: Context.Context<ImportNeeds>,
  path: string,
  services: typeof ImportServices.Service
): Effect.Effect<PreparedFile, ImportFailure, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const counter = yield* Ref.make(0)
    const stage = yield* Ref.make<PrepareStage>("reading")
    const work = Effect.scoped(
      prepareFile(path, { progress: Ref.update(counter, (n) => n + 1), stage: (s) => Ref.set(stage, s) })
    ).pipe(
      Effect.provideService(ImportServices, services),
      Effect.provide(context),
      // Stopping it does not wait for it to end: a read that never returns cannot hold the job.
      Effect.disconnect
    )
    return yield* Effect.raceFirst(work, stallWatch(counter, stage, FILE_STALL_LIMIT))
  }).pipe(Effect.catchTag("FileStalled", stalledFile(path, services)))

/** Where an attempt starts: the file, and how many attempts in a row started there. */
interface AttemptStart {
  readonly file: number
  readonly attempts: number
}

/** The job's counts so far, and the files not wholly imported (the first few named, the rest counted). */
class ImportTally {
  counts: Record<string, number>
  problems: ReadonlyArray<Problem>
  more: number

  constructor(resumed: ImportCheckpoint | undefined) {
    this.counts = { ...resumed?.counts }
    this.problems = resumed?.problems ?? []
    this.more = resumed?.more_problems ?? 0
  }

  add(counts: Readonly<Record<string, number>>) {
    this.counts = add(this.counts, counts)
  }

  noteProblem(path: string, problem: string | undefined) {
    if (problem === undefined) return
    if (this.problems.length < MAX_PROBLEMS) this.problems = [...this.problems, { path, problem }]
    else this.more++
  }

  checkpoint(nextFile: number, started: AttemptStart): ImportCheckpoint {
    return {
      next_file: nextFile,
      counts: this.counts,
      started_at_file: started,
      ...(this.problems.length === 0 ? {} : { problems: this.problems }),
      ...(this.more === 0 ? {} : { more_problems: this.more })
    }
  }

  /** `partial` when anything asked for is not in the index, with the note naming why. */
  outcome(): JobOutcome {
    const incomplete = INCOMPLETE.some((k) => (this.counts[k] ?? 0) > 0)
    const note = noteOf(this.problems, this.more)
    return { state: incomplete ? "partial" : "completed", counts: this.counts, ...(note === undefined ? {} : { note }) }
  }
}

/**
 * The file at which attempts kept being stopped, skipped: counted and named as unreadable, with
 * the skip kept (import_retries) in the start's commit, for the daemon to try it again later.
 */
const skipInterrupted = (context: Context.Context<ImportNeeds>, path: string, attempts: number, tally: ImportTally) =>
  Effect.gen(function* () {
    const reason = `the import was interrupted ${attempts} times while reading this file (the daemon stopped or crashed); skipped`
    tally.add({ files_unreadable: 1 })
    tally.noteProblem(path, reason)
    const signature = yield* signatureOf(path).pipe(Effect.provide(context))
    return recordSkipped(path, signature, reason).pipe(
      Effect.mapError((e) => HistoryStoreError.of(`record the skip of ${path}`, e))
    )
  })

/**
 * Records where this attempt starts before opening anything: when attempts keep being stopped
 * inside the same file, the next one skips it. Returns the first file to import and the start.
 */
const startAttempt = (
  context: Context.Context<ImportNeeds>,
  paths: ReadonlyArray<string>,
  job: JobContext<ImportCheckpoint>,
  tally: ImportTally
) =>
  Effect.gen(function* () {
    const resumed = Option.getOrUndefined(job.checkpoint)
    let next = resumed?.next_file ?? 0
    const previous = resumed?.started_at_file
    let attempts = previous !== undefined && previous.file === next ? previous.attempts : 0
    let skipped: Effect.Effect<void, HistoryStoreError, SqlClient.SqlClient> | undefined
    if (next < paths.length && attempts >= MAX_INTERRUPTED_ATTEMPTS) {
      skipped = yield* skipInterrupted(context, paths[next] as string, attempts, tally)
      next++
      attempts = 0
    }
    const started: AttemptStart = { file: next, attempts: attempts + 1 }
    if (next < paths.length || skipped !== undefined) {
      yield* job.commit(skipped ?? Effect.void, {
        checkpoint: tally.checkpoint(next, started),
        progressDone: next,
        progressTotal: paths.length,
        counts: tally.counts
      })
    }
    return { next, started }
  })

/**
 * One file imported and committed with the checkpoint after it. A failure here or in the commit
 * fails the job: nothing of this file is committed and the checkpoint stays before it, so the
 * next run imports it again.
 */
const importOne = (
  context: Context.Context<ImportNeeds>,
  services: typeof ImportServices.Service,
  job: JobContext<ImportCheckpoint>,
  tally: ImportTally,
  at: { readonly paths: ReadonlyArray<string>; readonly index: number; readonly started: AttemptStart }
) =>
  Effect.gen(function* () {
    const path = at.paths[at.index] as string
    const prepared = yield* prepareBounded(context, path, services)
    tally.add(prepared.report.counts)
    tally.noteProblem(path, problemOf(prepared.report))
    // Read to its end (whatever it held): a retry waiting for it is done.
    yield* job.commit(
      Effect.zipRight(
        prepared.write,
        clearRetry(path).pipe(Effect.mapError((e) => HistoryStoreError.of(`clear the retry of ${path}`, e)))
      ),
      {
        checkpoint: tally.checkpoint(at.index + 1, at.started),
        progressDone: at.index + 1,
        progressTotal: at.paths.length,
        counts: tally.counts
      }
    )
  })

/** One attempt of an import job: its start recorded, then each file from there in order. */
const runImport =
  (context: Context.Context<ImportNeeds>, options: ImportKindOptions): ImportKindType["run"] =>
  (params, job) =>
    Effect.gen(function* () {
      const tally = new ImportTally(Option.getOrUndefined(job.checkpoint))
      const { next, started } = yield* startAttempt(context, params.paths, job, tally)
      const services = yield* Effect.flatMap(IndexingServices, (s) => s.current).pipe(Effect.provide(context))
      for (let index = next; index < params.paths.length; index++) {
        if (options.holdEachFile !== undefined) yield* options.holdEachFile(params.paths[index] as string)
        yield* importOne(context, services, job, tally, { paths: params.paths, index, started })
      }
      return tally.outcome()
    })

/**
 * `import`: reads each transcript in one streaming pass (`import-records.ts`: the shared line
 * decoder, tool output checked in place rather than decoded), selects messages with the shared
 * classifier as the records are read, and stores them with their chunks (and vectors when a
 * model is verified). Each file commits in one transaction with the checkpoint, so a crash
 * resumes at the first unfinished file and never stores anything twice.
 *
 * A file that cannot be read never fails or holds up the job: not found (`missing`, ENOENT only),
 * refused (EACCES), not a regular file, failing or changing while read, a defect on its content,
 * no progress while reading it for `FILE_STALL_LIMIT`, repeated interruptions inside it. It is
 * counted and named in the job's note with its reason, and the job goes on and ends `partial`.
 *
 * What is not the file's fault fails the job, typed: the tokenizer (`ChunkingFailed`), the model
 * (`EmbeddingFailed`, also when it stalls), the database or vector index (`HistoryStoreError`; a
 * full disk becomes the job store's `StoreError` naming the database, the space left and the
 * remedy). Nothing of that file is committed and the checkpoint stays before it, so the next run
 * imports it: a broken model is one failed job saying so, never N files called unreadable.
 */
export const makeImportKind = Effect.fn("makeImportKind")(function* (options: ImportKindOptions = {}) {
  const context = yield* Effect.context<ImportNeeds>()
  const kind: ImportKindType = {
    name: "import",
    params: ImportParams,
    checkpoint: ImportCheckpoint,
    run: runImport(context, options)
  }
  return registerJobKind(kind)
})
