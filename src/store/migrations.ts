import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createAuthoredUpdatesSchema } from "../history/authored-updates-schema.js"
import { createCaptureSchema } from "../history/capture-schema.js"
import { createForgetSchema } from "../history/forget-schema.js"
import { createHistorySchema } from "../history/history-schema.js"
import { createImportRetrySchema } from "../history/import-retry-schema.js"
import { migrateToSourceNeutral } from "../history/source-neutral-schema.js"

/**
 * The schema, one migration per version. The highest id is the schema version this build
 * writes; a database at any other version is refused by verification until install migrates it.
 */
export const migrations = {
  "1_meta": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT`
  }),
  /** Durable jobs run by the daemon's single writer, and the rows its maintenance kind records. */
  "2_jobs": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE jobs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL,
      params TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'partial', 'failed', 'superseded', 'cancelled')),
      progress_done INTEGER NOT NULL DEFAULT 0,
      progress_total INTEGER,
      counts TEXT NOT NULL DEFAULT '{}',
      checkpoint TEXT,
      error TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      submitted_at TEXT NOT NULL,
      started_at TEXT,
      updated_at TEXT NOT NULL,
      finished_at TEXT
    ) STRICT`
    yield* sql`CREATE INDEX jobs_by_state ON jobs (state, seq)`
    yield* sql`CREATE TABLE maintenance_runs (
      job_id TEXT NOT NULL REFERENCES jobs (id),
      step TEXT NOT NULL,
      result TEXT NOT NULL,
      finished_at TEXT NOT NULL,
      PRIMARY KEY (job_id, step)
    ) STRICT`
  }),
  /** Imported history: source files, sessions, messages, chunks and their FTS5 index. */
  "3_history": createHistorySchema,
  /**
   * Messages from any source: `source_type` an open set, an `agent` per row, and provenance a
   * transcript span or a note revision (`messages` and `chunks` rebuilt, ids and FTS kept).
   */
  "4_source_neutral": migrateToSourceNeutral,
  /**
   * Authored updates: the sessions blctx opens for agents (`context_sessions`) and each write of
   * a note (`authored_updates`), tied to the message that carries its text by `(note_id, revision)`.
   */
  "5_authored_updates": createAuthoredUpdatesSchema,
  /**
   * Capture: the bindings the hooks report (`capture_bindings`), each drained hook event
   * (`capture_events`) and the spool files the drain refused (`capture_rejections`).
   */
  "6_capture": createCaptureSchema,
  /**
   * Forgetting: tombstones of confirmed forgets (selector and counts, never content), the byte
   * spans of transcripts the importer must not store again, forgotten note ids; FTS5 secure-delete.
   */
  "7_forget": createForgetSchema,
  /** Skipped imports the daemon retries with a bounded backoff (`import_retries`). */
  "8_import_retries": createImportRetrySchema
} satisfies Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>

const versionOf = (key: string) => Number.parseInt(key, 10)

export const CURRENT_SCHEMA_VERSION = Math.max(...Object.keys(migrations).map(versionOf))

/**
 * The migrations up to and including `version`: the schema an earlier release left behind, so a
 * test can build such a database and upgrade it in place.
 */
export const migrationsThrough = (version: number): Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> =>
  Object.fromEntries(Object.entries(migrations).filter(([key]) => versionOf(key) <= version))

export const MIGRATIONS_TABLE = "blctx_migrations"
