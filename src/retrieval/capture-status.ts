import { Schema } from "effect"

/**
 * How a refused transcript path's reason starts (`capture_bindings.last_error`), so the capture
 * counts tell refusals apart from imports that failed.
 */
export const REFUSED_PREFIX = "refused: "

const Count = Schema.Int.pipe(Schema.nonNegative())

/**
 * What capture has done, as `blctx index-status` and the MCP `context_status` report it. All
 * counts cover the current hook generation's captures since install.
 */
export class CaptureStatus extends Schema.Class<CaptureStatus>("CaptureStatus")({
  /** Hook events drained into the database, by event type. */
  events: Schema.Struct({ SessionStart: Count, UserPromptSubmit: Count, Stop: Count, SessionEnd: Count }),
  /** Captured events still in the spool, plus bound transcripts whose newest content is not indexed yet. */
  pending: Count,
  /** Bindings still waiting for a usable transcript path (Codex sent null so far). */
  null_paths: Count,
  /** Captures refused at drain (malformed, stale generation) and bound transcripts whose import failed. */
  errors: Count,
  /**
   * Of the errors, transcript paths a hook named that were never read: outside the agent's
   * transcript folders, not owned by you, or not a regular file (the reason says which).
   */
  refused: Schema.optionalWith(Count, { default: () => 0 }),
  /** Bound sessions whose transcript is indexed as it is now. */
  indexed_sessions: Count,
  last_event_at: Schema.NullOr(Schema.String),
  /** The newest error's reason, for doctor; null when there is none. */
  last_error: Schema.NullOr(Schema.String)
}) {}

/** Nothing captured: what a daemon without capture (or before its first event) reports. */
export const noCapture = () =>
  new CaptureStatus({
    events: { SessionStart: 0, UserPromptSubmit: 0, Stop: 0, SessionEnd: 0 },
    pending: 0,
    null_paths: 0,
    errors: 0,
    refused: 0,
    indexed_sessions: 0,
    last_event_at: null,
    last_error: null
  })
