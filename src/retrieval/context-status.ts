import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { JobView } from "../jobs/job.js"
import { countOf } from "../sql/sql-rows.js"
import { CaptureStatus, noCapture } from "./capture-status.js"
import { IndexState, QueryMode } from "./contract.js"
import { Coverage } from "./coverage.js"

/** The facts the index state is judged from, read in one go. */
export class IndexStatus extends Schema.Class<IndexStatus>("IndexStatus")({
  has_messages: Schema.Boolean,
  chunks_without_vector: Schema.Int,
  active_kinds: Schema.Array(Schema.String),
  recent_jobs: Schema.Array(JobView)
}) {}

/** What the index covers and whether search can use vectors: `blctx index-status`, MCP `context_status`. */
export class ContextStatusResponse extends Schema.Class<ContextStatusResponse>("ContextStatusResponse")({
  index_state: IndexState,
  query_mode: QueryMode,
  query_mode_reason: Schema.NullOr(Schema.String),
  model_fingerprint: Schema.NullOr(Schema.String),
  coverage: Coverage,
  recent_jobs: Schema.Array(JobView),
  /**
   * Authored updates (notes logged with `log_update`) still waiting for a vector of the loaded
   * model (every note when none is loaded). They are found lexically meanwhile; the daemon embeds
   * them in the background, and its repair retries any that failed.
   */
  authored_updates_pending: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 }),
  /**
   * What the optional hooks captured for the current hook generation: events drained, sessions
   * indexed through them, what waits (spool records, transcripts not indexed as they are now),
   * bindings without a transcript path yet, errors and the newest one. Zeros without hooks.
   */
  capture: Schema.optionalWith(CaptureStatus, { default: noCapture })
}) {}

/** The request of the read behind `authored_updates_pending`: the loaded model's fingerprint key, or null. */
export const AuthoredUpdatesPendingRequest = Schema.Struct({ fingerprint_key: Schema.NullOr(Schema.String) })
export type AuthoredUpdatesPendingRequest = typeof AuthoredUpdatesPendingRequest.Type
/** Its answer: how many note revisions have a chunk without a vector of that model. */
export const AuthoredUpdatesPending = Schema.NonNegativeInt

/**
 * Note revisions with a chunk lacking a vector of the model `fingerprintKey` names (with none
 * loaded, every note with chunks waits). Read-only; the note's `(note_id, note_revision)` index
 * finds notes without scanning transcript messages.
 */
export const countAuthoredUpdatesPending = (request: AuthoredUpdatesPendingRequest) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* countOf(sql`
      SELECT count(*) AS n FROM messages m
      WHERE m.note_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM chunks c
        WHERE c.message_id = m.id AND (c.vector_fingerprint IS NULL OR c.vector_fingerprint IS NOT ${request.fingerprint_key})
      )`)
  })
