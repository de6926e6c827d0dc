import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Migration 6: capture. The daemon drains the hooks' spool into these tables and reconciles the
 * transcripts they name with the index; no existing table changes.
 *
 * - `capture_bindings`: one row per blctx binding (`binding_key`, the hook's own UUID for an
 *   agent home and event session id). Keyed by the binding, not by `(agent_home,
 *   event_session_id)`: after an uninstall and a reinstall the same agent session may be bound
 *   again under a new key, so that pair is only indexed. `transcript_path` stays NULL
 *   (`awaiting_path`) until an event brings a usable one. `state` is the reconciler's verdict
 *   (`pending`: newer content than the index holds, or an import queued; `indexed`; `error`
 *   with `last_error`); `submitted_*` is the file's signature when the reconciler last queued
 *   its import (`import_job_id`), so an import that could not index it is not queued again
 *   until the file changes. `generation` is the newest event's hook generation.
 * - `capture_events`: one row per drained event. `spool_file` (the spool file's name) is unique,
 *   so a drain that committed and crashed before deleting the file records it once.
 * - `capture_rejections`: spool files the drain refused (malformed, another installation, a
 *   stale generation), by name (unique, for the same reason), with the reason; only the newest
 *   `MAX_CAPTURE_REJECTIONS` are kept.
 */
export const createCaptureSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE capture_bindings (
    binding_key TEXT PRIMARY KEY NOT NULL,
    session_uuid TEXT NOT NULL,
    agent TEXT NOT NULL,
    agent_home TEXT NOT NULL,
    event_session_id TEXT NOT NULL,
    generation TEXT NOT NULL,
    cwd TEXT NOT NULL,
    transcript_path TEXT,
    first_event_at TEXT NOT NULL,
    last_event_at TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('awaiting_path', 'pending', 'indexed', 'error')),
    last_error TEXT,
    checked_at TEXT,
    submitted_size INTEGER,
    submitted_mtime_ms REAL,
    submitted_ino INTEGER,
    import_job_id TEXT,
    CHECK ((transcript_path IS NULL) = (state = 'awaiting_path')),
    CHECK ((state = 'error') = (last_error IS NOT NULL))
  ) STRICT`
  yield* sql`CREATE INDEX capture_bindings_by_agent_session ON capture_bindings (agent_home, event_session_id)`
  yield* sql`CREATE INDEX capture_bindings_by_generation ON capture_bindings (generation, state)`
  yield* sql`CREATE TABLE capture_events (
    id INTEGER PRIMARY KEY,
    spool_file TEXT NOT NULL UNIQUE,
    binding_key TEXT NOT NULL REFERENCES capture_bindings (binding_key) ON DELETE CASCADE,
    event TEXT NOT NULL,
    turn_id TEXT,
    generation TEXT NOT NULL,
    received_at TEXT NOT NULL,
    drained_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX capture_events_by_binding ON capture_events (binding_key, received_at)`
  yield* sql`CREATE INDEX capture_events_by_generation ON capture_events (generation, event)`
  yield* sql`CREATE TABLE capture_rejections (
    id INTEGER PRIMARY KEY,
    spool_file TEXT NOT NULL UNIQUE,
    reason TEXT NOT NULL,
    rejected_at TEXT NOT NULL
  ) STRICT`
})

/** The refused spool files remembered (for the count and the newest reason); older ones are dropped. */
export const MAX_CAPTURE_REJECTIONS = 1000
