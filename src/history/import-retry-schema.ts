import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Migration 8: skipped imports to retry. A file the importer skipped because imports kept being
 * interrupted inside it (`MAX_INTERRUPTED_ATTEMPTS`) gets a row: its signature when skipped
 * (size, mtime, inode: a change resets the backoff), how many times it was skipped in a row,
 * when the daemon tries it next, and why it was skipped. The row goes once an import reads the
 * file to its end, or the file is gone.
 */
export const createImportRetrySchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE import_retries (
    path TEXT PRIMARY KEY NOT NULL,
    size INTEGER,
    mtime_ms REAL,
    ino INTEGER,
    attempts INTEGER NOT NULL CHECK (attempts >= 0),
    next_retry_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    skipped_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX import_retries_by_due ON import_retries (next_retry_at)`
})
