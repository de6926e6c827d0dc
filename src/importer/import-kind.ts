import * as NodePath from "node:path"
import { Cause, Data, Duration, Effect, Option, Ref, Schema } from "effect"
import type { SafeFs } from "../fs/safe-fs.js"
import { JobCounts } from "../jobs/job.js"
import { type JobKind, registerJobKind } from "../jobs/job-kind.js"
import { BoundedId, BoundedPath } from "../retrieval/contract.js"
import type { TranscriptFiles } from "../transcripts/transcript-files.js"
import { type FileReport, type PreparedFile, prepareFile } from "./import-file.js"
import { ImportServices, IndexingServices } from "./import-services.js"

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

class FileStalled extends Data.TaggedError("FileStalled")<{ readonly message: string }> {}

/** A file's rows could not be written: its transaction was rolled back. */
class FileNotStored extends Data.TaggedError("FileNotStored")<{ readonly message: string; readonly cause: unknown }> {}

const describe = (error: unknown): string => {
  if (error instanceof Error) return error.name === "Error" ? error.message : `${error.name}: ${error.message}`
  return typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
}

const add = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

const inWords = (d: Duration.Duration): string => {
  const seconds = Math.round(Duration.toSeconds(d))
  return seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}` : `${seconds} seconds`
}

const unreadable = (path: string, problem: string): PreparedFile => ({
  report: { path, status: "unreadable", counts: { files_unreadable: 1 }, note: problem },
  write: Effect.void
})

/** Why a file is not wholly in the index, or undefined when it is. */
const problemOf = (report: FileReport): string | undefined =>
  report.status === "unreadable" || report.status === "missing" || report.status === "conflict"
    ? (report.note ?? report.status)
    : report.problem

/** How often the stall watch looks at a file's progress. */
const STALL_CHECK = Duration.seconds(10)

/**
 * Fails once `progress` (a counter the work bumps) has not moved at any check for `limit`.
 * Counting checks rather than comparing clock times means a machine that was suspended, or a
 * clock set forward, cannot make a file look stuck.
 */
const stallWatch = (progress: Ref.Ref<number>, limit: Duration.Duration) =>
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
    return yield* new FileStalled({
      message: `no progress for ${inWords(limit)} (nothing read, chunked or embedded); skipped`
    })
  })

const noteOf = (problems: ReadonlyArray<Problem>, more: number): string | undefined => {
  if (problems.length === 0) return undefined
  const listed = problems.map((p) => `${p.path}: ${p.problem}`).join("; ")
  return `not wholly imported: ${listed}${more > 0 ? `; and ${more} more file${more === 1 ? "" : "s"}` : ""}`
}

/**
 * `import`: reads each transcript with the shared reader, selects messages with the shared
 * classifier, and stores them with their chunks (and vectors when a model is verified). Each
 * file commits in one transaction with the checkpoint, so a crash resumes at the first
 * unfinished file and never stores anything twice.
 *
 * No file can fail or hold up the job: whatever goes wrong with one (it cannot be opened or is not
 * a regular file, a defect while reading it, no progress for `FILE_STALL_LIMIT`, rows that cannot
 * be stored, repeated interruptions inside it) is that file's problem, counted and named in the
 * job's note, and the job goes on with the next file. The one exception is a full disk
 * (SQLITE_FULL, ENOSPC): every later file would fail the same way, so the job fails with a message
 * naming the database, the space left and the remedy.
 */
export const makeImportKind = Effect.gen(function* () {
  const context = yield* Effect.context<TranscriptFiles | SafeFs | IndexingServices>()

  /** One file, prepared under the stall watch; every failure but an interruption becomes its report. */
  const prepareBounded = (path: string, services: typeof ImportServices.Service) =>
    Effect.gen(function* () {
      const counter = yield* Ref.make(0)
      const progress = Ref.update(counter, (n) => n + 1)
      const work = Effect.scoped(prepareFile(path, { progress })).pipe(
        Effect.provideService(ImportServices, services),
        Effect.provide(context),
        // Stopping it does not wait for it to end: a read that never returns cannot hold the job.
        Effect.disconnect
      )
      return yield* Effect.raceFirst(work, stallWatch(counter, FILE_STALL_LIMIT))
    }).pipe(
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure) && failure.value instanceof FileStalled) {
          return Effect.succeed(unreadable(path, failure.value.message))
        }
        return Effect.succeed(unreadable(path, `could not be imported: ${describe(Cause.squash(cause))}`))
      })
    )

  const kind: JobKind<ImportParams, typeof ImportParams.Encoded, ImportCheckpoint, typeof ImportCheckpoint.Encoded> = {
    name: "import",
    params: ImportParams,
    checkpoint: ImportCheckpoint,
    run: (params, job) =>
      Effect.gen(function* () {
        const resumed = Option.getOrUndefined(job.checkpoint)
        let next = resumed?.next_file ?? 0
        let counts: Record<string, number> = { ...resumed?.counts }
        let problems: ReadonlyArray<Problem> = resumed?.problems ?? []
        let more = resumed?.more_problems ?? 0
        const total = params.paths.length
        const noteProblem = (path: string, problem: string | undefined) => {
          if (problem === undefined) return
          if (problems.length < MAX_PROBLEMS) problems = [...problems, { path, problem }]
          else more++
        }
        const checkpoint = (nextFile: number, started: { readonly file: number; readonly attempts: number }) => ({
          next_file: nextFile,
          counts,
          started_at_file: started,
          ...(problems.length === 0 ? {} : { problems }),
          ...(more === 0 ? {} : { more_problems: more })
        })

        // Record where this attempt starts before opening anything: when attempts keep being
        // stopped inside the same file, the next one skips it.
        const previous = resumed?.started_at_file
        let attempts = previous !== undefined && previous.file === next ? previous.attempts : 0
        if (next < total && attempts >= MAX_INTERRUPTED_ATTEMPTS) {
          const path = params.paths[next] as string
          counts = add(counts, { files_unreadable: 1 })
          noteProblem(
            path,
            `the import was interrupted ${attempts} times while reading this file (the daemon stopped or crashed); skipped`
          )
          next++
          attempts = 0
        }
        const started = { file: next, attempts: attempts + 1 }
        if (next < total) {
          yield* job.commit(Effect.void, {
            checkpoint: checkpoint(next, started),
            progressDone: next,
            progressTotal: total,
            counts
          })
        }

        const services = yield* Effect.flatMap(IndexingServices, (s) => s.current).pipe(Effect.provide(context))
        for (let index = next; index < total; index++) {
          const path = params.paths[index] as string
          const prepared = yield* prepareBounded(path, services)
          const before = { counts, problems, more }
          counts = add(counts, prepared.report.counts)
          noteProblem(path, problemOf(prepared.report))
          const progress = { progressDone: index + 1, progressTotal: total }
          yield* job
            .commit(
              prepared.write.pipe(
                Effect.catchAllDefect((defect) => Effect.fail(defect)),
                Effect.mapError(
                  // The cause is kept: a full disk (SQLITE_FULL) fails the job rather than this file.
                  (error) => new FileNotStored({ message: `could not be stored: ${describe(error)}`, cause: error })
                )
              ),
              { checkpoint: checkpoint(index + 1, started), ...progress, counts }
            )
            .pipe(
              Effect.catchTag("FileNotStored", (error) => {
                // Rolled back: the file counts as unreadable, and the job goes on without it.
                counts = add(before.counts, { files_unreadable: 1 })
                problems = before.problems
                more = before.more
                noteProblem(path, error.message)
                return job.commit(Effect.void, { checkpoint: checkpoint(index + 1, started), ...progress, counts })
              })
            )
        }
        const incomplete = INCOMPLETE.some((k) => (counts[k] ?? 0) > 0)
        const note = noteOf(problems, more)
        return { state: incomplete ? "partial" : "completed", counts, ...(note === undefined ? {} : { note }) } as const
      })
  }
  return registerJobKind(kind)
})
