import * as NodePath from "node:path"
import { Effect, Option, Schema } from "effect"
import type { SafeFs } from "../fs/safe-fs.js"
import { JobCounts } from "../jobs/job.js"
import { JobFailed } from "../jobs/job-errors.js"
import { type JobKind, registerJobKind } from "../jobs/job-kind.js"
import type { TranscriptFiles } from "../transcripts/transcript-files.js"
import { type PreparedFile, prepareFile } from "./import-file.js"
import { ImportServices, IndexingServices } from "./import-services.js"

const AbsolutePath = Schema.String.pipe(
  Schema.filter((p) => NodePath.isAbsolute(p), { message: () => "paths must be absolute" })
)

export const ImportParams = Schema.Struct({
  /** Transcripts to import, in order (newest first for the installer's history_index). */
  paths: Schema.Array(AbsolutePath).pipe(Schema.minItems(1), Schema.maxItems(100_000)),
  /** Who asked: `cli`, `history_index`, ... (shown in index-status). */
  origin: Schema.optionalWith(Schema.String, { default: () => "cli" })
})
export type ImportParams = typeof ImportParams.Type

/** The next file to import, and the counts of the files already committed. */
const ImportCheckpoint = Schema.Struct({ next_file: Schema.Int, counts: JobCounts })

/** Files that make a job `partial`: not everything asked for is in the index. */
const INCOMPLETE = ["unclassified", "files_conflict", "files_missing", "files_unreadable"]

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)

const add = (a: Record<string, number>, b: Readonly<Record<string, number>>) => {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v
  return out
}

/**
 * `import`: reads each transcript with the shared reader, selects messages with the shared
 * classifier, and stores them with their chunks (and vectors when a model is verified). Each
 * file commits in one transaction with the checkpoint, so a crash resumes at the first
 * unfinished file and never stores anything twice.
 */
export const makeImportKind = Effect.gen(function* () {
  const context = yield* Effect.context<TranscriptFiles | SafeFs | IndexingServices>()
  const kind: JobKind<
    ImportParams,
    typeof ImportParams.Encoded,
    typeof ImportCheckpoint.Type,
    typeof ImportCheckpoint.Encoded
  > = {
    name: "import",
    params: ImportParams,
    checkpoint: ImportCheckpoint,
    run: (params, job) =>
      Effect.gen(function* () {
        const start = Option.match(job.checkpoint, {
          onNone: () => ({ next_file: 0, counts: {} as Record<string, number> }),
          onSome: (c) => ({ next_file: c.next_file, counts: { ...c.counts } })
        })
        let counts: Record<string, number> = start.counts
        const services = yield* Effect.flatMap(IndexingServices, (s) => s.current).pipe(Effect.provide(context))
        const total = params.paths.length
        for (let index = start.next_file; index < total; index++) {
          const path = params.paths[index] as string
          const prepared: PreparedFile = yield* Effect.scoped(prepareFile(path)).pipe(
            Effect.provideService(ImportServices, services),
            Effect.provide(context),
            Effect.catchAll((error) =>
              Effect.succeed<PreparedFile>({
                report: { path, status: "unreadable", counts: { files_unreadable: 1 }, note: describe(error) },
                write: Effect.void
              })
            )
          )
          counts = add(counts, prepared.report.counts)
          yield* job.commit(
            prepared.write.pipe(
              Effect.mapError((error) => new JobFailed({ message: `could not store ${path}: ${String(error)}` }))
            ),
            { checkpoint: { next_file: index + 1, counts }, progressDone: index + 1, progressTotal: total, counts }
          )
        }
        const incomplete = INCOMPLETE.some((k) => (counts[k] ?? 0) > 0)
        return { state: incomplete ? "partial" : "completed", counts } as const
      })
  }
  return registerJobKind(kind)
})
