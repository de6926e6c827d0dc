import { SqlClient, type SqlError } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { rowsOf } from "../sql/sql-rows.js"
import { StoreError } from "../store/store-error.js"
import { BindingState } from "./capture-drain-store.js"
import { type ReconcileVerdict, reconcileVerdict, type TranscriptLook } from "./reconcile-decision.js"
import { transcriptRefusal } from "./transcript-admission.js"

/** How many bindings one pass looks at, most recently active first (older ones wait for an event). */
export const RECONCILE_BATCH = 1000

/** A binding with a transcript path, what the index holds for that path, and the last import queued for it. */
const NullNumber = Schema.NullOr(Schema.Number)
const NullText = Schema.NullOr(Schema.String)
const Candidate = Schema.Struct({
  binding_key: Schema.String,
  agent: Schema.String,
  agent_home: Schema.String,
  transcript_path: Schema.String,
  state: BindingState,
  last_error: NullText,
  submitted_size: NullNumber,
  submitted_mtime_ms: NullNumber,
  submitted_ino: NullNumber,
  file_size: NullNumber,
  file_mtime_ms: NullNumber,
  file_ino: NullNumber,
  file_state: NullText,
  file_note: NullText,
  job_state: NullText,
  job_error: NullText
})
type Candidate = typeof Candidate.Type
const candidateRows = rowsOf(Candidate)

/** What a pass did: imports queued (one job for every path that needs one), and bindings per verdict. */
export interface ReconcileOutcome {
  readonly submitted: ReadonlyArray<string>
  readonly jobId: string | null
  readonly indexed: number
  readonly waiting: number
  readonly errors: number
  /** Of the errors, paths never read: outside the agent's transcript folders, not yours, not a regular file. */
  readonly refused: number
}

/** Queues an import of these paths; returns the job's id. */
export type SubmitImport<E> = (paths: ReadonlyArray<string>) => Effect.Effect<string, E>

const lookAt = (path: string) =>
  Effect.flatMap(SafeFs, (fs) =>
    fs.lstat(path).pipe(
      Effect.map(
        (entry): TranscriptLook =>
          Option.isNone(entry)
            ? { _tag: "Missing" }
            : entry.value.kind === "file"
              ? {
                  _tag: "File",
                  signature: { size: entry.value.size, mtime_ms: entry.value.mtimeMs, ino: entry.value.ino }
                }
              : { _tag: "NotRegular", kind: entry.value.kind }
      ),
      Effect.catchAll((e) => Effect.succeed<TranscriptLook>({ _tag: "Unexaminable", code: e.code }))
    )
  )

const verdictOf = (row: Candidate, look: TranscriptLook): ReconcileVerdict =>
  reconcileVerdict({
    path: row.transcript_path,
    look,
    indexed:
      row.file_size === null || row.file_mtime_ms === null || row.file_ino === null || row.file_state === null
        ? undefined
        : {
            signature: { size: row.file_size, mtime_ms: row.file_mtime_ms, ino: row.file_ino },
            state: row.file_state,
            note: row.file_note
          },
    submitted:
      row.submitted_size === null || row.submitted_mtime_ms === null || row.submitted_ino === null
        ? undefined
        : {
            signature: { size: row.submitted_size, mtime_ms: row.submitted_mtime_ms, ino: row.submitted_ino },
            job: row.job_state === null ? undefined : { state: row.job_state, error: row.job_error }
          }
  })

/**
 * One reconciliation of the bound transcripts with the index, on `SqlClient` (the writer): a path
 * a hook named is first admitted or refused (`transcript-admission.ts`: only a regular file of
 * this user's, inside the agent home's transcript folders; a refusal is the binding's error, its
 * reason starting `refused: `), then each admitted path is looked at with lstat (never followed, never opened) and judged against `source_files`
 * and the import last queued for it; the paths that need importing are queued as one import job
 * through `submit` (the job system: the importer reuses the stored prefix of a grown file and
 * keeps unchanged messages with their vectors). A binding's row changes only when its verdict
 * does, each in its own statement, so the writer is held for moments.
 */
export const reconcileBindings = <E>(
  database: string,
  submit: SubmitImport<E>
): Effect.Effect<ReconcileOutcome, StoreError | E, SqlClient.SqlClient | SafeFs> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const storeError = (e: SqlError.SqlError) =>
      new StoreError({ path: database, message: `reconciling captured transcripts: ${e.message}` })
    const rows = yield* candidateRows(sql`
      SELECT b.binding_key, b.agent, b.agent_home, b.transcript_path, b.state, b.last_error,
        b.submitted_size, b.submitted_mtime_ms, b.submitted_ino,
        f.size AS file_size, f.mtime_ms AS file_mtime_ms, f.ino AS file_ino, f.state AS file_state, f.note AS file_note,
        j.state AS job_state, j.error AS job_error
      FROM capture_bindings b
      LEFT JOIN source_files f ON f.path = b.transcript_path
      LEFT JOIN jobs j ON j.id = b.import_job_id
      WHERE b.transcript_path IS NOT NULL
      ORDER BY b.last_event_at DESC
      LIMIT ${RECONCILE_BATCH}`).pipe(Effect.mapError(storeError))
    const now = DateTime.formatIso(yield* DateTime.now)

    const setState = (row: Candidate, state: BindingState, lastError: string | null) =>
      row.state === state && row.last_error === lastError
        ? Effect.void
        : sql`UPDATE capture_bindings SET state = ${state}, last_error = ${lastError}, checked_at = ${now}
              WHERE binding_key = ${row.binding_key}`.pipe(Effect.asVoid, Effect.mapError(storeError))

    const toSubmit: Array<{ readonly row: Candidate; readonly verdict: ReconcileVerdict & { _tag: "Submit" } }> = []
    const outcome = { indexed: 0, waiting: 0, errors: 0, refused: 0 }
    const reportError = (row: Candidate, reason: string) =>
      Effect.gen(function* () {
        outcome.errors++
        if (row.state !== "error" || row.last_error !== reason) {
          yield* Effect.logWarning("captured transcript not indexed").pipe(
            Effect.annotateLogs({ binding: row.binding_key, reason })
          )
        }
        yield* setState(row, "error", reason)
      })
    for (const row of rows) {
      // Decided before anything else looks at the file: a refused path is never read.
      const refusal = yield* transcriptRefusal(row.transcript_path, row.agent, row.agent_home)
      if (Option.isSome(refusal)) {
        outcome.refused++
        yield* reportError(row, refusal.value)
        continue
      }
      const verdict = verdictOf(row, yield* lookAt(row.transcript_path))
      switch (verdict._tag) {
        case "Submit":
          toSubmit.push({ row, verdict })
          break
        case "Indexed":
          outcome.indexed++
          yield* setState(row, "indexed", null)
          break
        case "Waiting":
          outcome.waiting++
          yield* setState(row, "pending", null)
          break
        case "Error":
          yield* reportError(row, verdict.reason)
          break
      }
    }
    if (toSubmit.length === 0) return { ...outcome, submitted: [], jobId: null }

    const paths = [...new Set(toSubmit.map((s) => s.row.transcript_path))]
    const jobId = yield* submit(paths)
    yield* Effect.logInfo("captured transcripts queued for import").pipe(
      Effect.annotateLogs({ job: jobId, files: paths.length })
    )
    for (const { row, verdict } of toSubmit) {
      yield* sql`UPDATE capture_bindings SET state = 'pending', last_error = NULL, checked_at = ${now},
          submitted_size = ${verdict.signature.size}, submitted_mtime_ms = ${verdict.signature.mtime_ms},
          submitted_ino = ${verdict.signature.ino}, import_job_id = ${jobId}
        WHERE binding_key = ${row.binding_key}`.pipe(Effect.mapError(storeError))
    }
    return { ...outcome, submitted: paths, jobId }
  })
