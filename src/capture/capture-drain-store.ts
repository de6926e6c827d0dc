import { type SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"
import { MAX_CAPTURE_REJECTIONS } from "../history/capture-schema.js"
import { idRows } from "../sql/sql-rows.js"
import type { StoreError } from "../store/store-error.js"
import { makeWriterErrors } from "../store/writer-errors.js"
import type { CaptureRecord } from "./capture-record.js"

export const BindingState = Schema.Literal("awaiting_path", "pending", "indexed", "error")
export type BindingState = typeof BindingState.Type

/** A `capture_bindings` row as the drain reads and writes it. */
export const BindingRow = Schema.Struct({
  binding_key: Schema.String,
  session_uuid: Schema.String,
  agent: Schema.String,
  agent_home: Schema.String,
  event_session_id: Schema.String,
  generation: Schema.String,
  cwd: Schema.String,
  transcript_path: Schema.NullOr(Schema.String),
  first_event_at: Schema.String,
  last_event_at: Schema.String,
  state: BindingState,
  last_error: Schema.NullOr(Schema.String),
  submitted_size: Schema.NullOr(Schema.Number),
  submitted_mtime_ms: Schema.NullOr(Schema.Number),
  submitted_ino: Schema.NullOr(Schema.Number),
  import_job_id: Schema.NullOr(Schema.String)
})
export type BindingRow = typeof BindingRow.Type

/** A hook's time, as the stored UTC form (so stored times compare as strings). */
export const utcIso = (iso: string) => new Date(iso).toISOString()

/**
 * A binding after one more event. Events may be drained out of order, so the newer event (by
 * its own time) decides the cwd, generation and path, and a null path never clears a known one.
 * A new path starts over (`pending`, nothing submitted for it); an event on an indexed binding
 * means the transcript has likely grown, so it is `pending` until the reconciler looks.
 */
export const mergeBinding = (existing: BindingRow | undefined, record: CaptureRecord): BindingRow => {
  const at = utcIso(record.received_at)
  const fresh = {
    submitted_size: null,
    submitted_mtime_ms: null,
    submitted_ino: null,
    import_job_id: null,
    last_error: null
  }
  if (existing === undefined) {
    return {
      binding_key: record.binding_key,
      session_uuid: record.session_uuid,
      agent: record.agent,
      agent_home: record.agent_home,
      event_session_id: record.event_session_id,
      generation: record.generation,
      cwd: record.cwd,
      transcript_path: record.transcript_path,
      first_event_at: at,
      last_event_at: at,
      state: record.transcript_path === null ? "awaiting_path" : "pending",
      ...fresh
    }
  }
  const newer = at >= existing.last_event_at
  const path =
    record.transcript_path === null || (existing.transcript_path !== null && !newer)
      ? existing.transcript_path
      : record.transcript_path
  const base = {
    ...existing,
    generation: newer ? record.generation : existing.generation,
    cwd: newer ? record.cwd : existing.cwd,
    transcript_path: path,
    // ISO UTC strings: the order of the text is the order in time.
    first_event_at: [at, existing.first_event_at].sort()[0] ?? at,
    last_event_at: newer ? at : existing.last_event_at
  }
  if (path === null) return { ...base, ...fresh, state: "awaiting_path" }
  if (path !== existing.transcript_path) return { ...base, ...fresh, state: "pending" }
  if (existing.state === "indexed" && newer) return { ...base, state: "pending" }
  return base
}

/** The drain's writes, each one short transaction on the daemon's writer connection. */
export interface CaptureStore {
  /** Records the event and its binding; false when this spool file was already recorded. */
  readonly recordCapture: (spoolFile: string, record: CaptureRecord) => Effect.Effect<boolean, StoreError>
  /** Records a refused spool file; false when it was already recorded. */
  readonly recordRejection: (spoolFile: string, reason: string) => Effect.Effect<boolean, StoreError>
}

/**
 * The capture tables' writes on `sql` (the writer). The transactions are tiny (a lookup and two
 * rows) because they share the connection with imports: the client serializes them with the
 * transaction in progress, so a drain waits for one import file at most and never lands inside it.
 */
export const makeCaptureStore = ({
  sql,
  database
}: {
  readonly sql: SqlClient.SqlClient
  readonly database: string
}): CaptureStore => {
  const isoNow = Effect.map(DateTime.now, DateTime.formatIso)

  const { transaction } = makeWriterErrors({ sql, database, afterFreeing: "the drain tries again" })

  const bindingByKey = SqlSchema.findAll({
    Request: Schema.String,
    Result: BindingRow,
    execute: (key) => sql`SELECT * FROM capture_bindings WHERE binding_key = ${key}`
  })

  const recordCapture = (spoolFile: string, record: CaptureRecord) =>
    transaction(
      "recording a capture",
      Effect.gen(function* () {
        const seen = yield* sql`SELECT 1 FROM capture_events WHERE spool_file = ${spoolFile}`
        if (seen.length > 0) return false
        const existing = (yield* bindingByKey(record.binding_key))[0]
        const row = mergeBinding(existing, record)
        if (existing === undefined) yield* sql`INSERT INTO capture_bindings ${sql.insert(row)}`
        else {
          const { binding_key: _, ...changes } = row
          yield* sql`UPDATE capture_bindings SET ${sql.update(changes)} WHERE binding_key = ${row.binding_key}`
        }
        yield* sql`INSERT INTO capture_events ${sql.insert({
          spool_file: spoolFile,
          binding_key: record.binding_key,
          event: record.event,
          turn_id: record.turn_id,
          generation: record.generation,
          received_at: utcIso(record.received_at),
          drained_at: yield* isoNow
        })}`
        return true
      })
    )

  const recordRejection = (spoolFile: string, reason: string) =>
    transaction(
      "recording a refused capture",
      Effect.gen(function* () {
        const inserted = yield* idRows(sql`
          INSERT INTO capture_rejections (spool_file, reason, rejected_at)
          VALUES (${spoolFile}, ${reason}, ${yield* isoNow})
          ON CONFLICT (spool_file) DO NOTHING
          RETURNING id`)
        const row = inserted[0]
        if (row === undefined) return false
        yield* sql`DELETE FROM capture_rejections WHERE id <= ${row.id - MAX_CAPTURE_REJECTIONS}`
        return true
      })
    )

  return { recordCapture, recordRejection }
}
