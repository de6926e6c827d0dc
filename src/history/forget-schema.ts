import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Migration 7: forgetting. What a person made blctx forget is deleted; what keeps it forgotten
 * is recorded here, never the content:
 *
 * - `forget_tombstones`: one row per confirmed forget: the selector (JSON: which note, session,
 *   file, project or time range; ids, paths and dates only), the counts removed, when, and when
 *   the database was scrubbed afterwards (`scrubbed_at` NULL until VACUUM and a truncating WAL
 *   checkpoint ran, so a daemon killed in between scrubs at its next start).
 * - `forgotten_spans`: byte ranges of a transcript whose messages were forgotten. The importer
 *   never stores a message inside one again (a re-import, an append that re-reads the last
 *   turn, a rewrite), so only bytes outside them (a later append) are indexed. The source file
 *   row stays: its size and prefix hash are what tell an unchanged file from an append.
 * - `forgotten_notes`: note ids that were forgotten, so restoring an older export
 *   (`import-notes`) does not bring them back.
 *
 * FTS5's own `secure-delete` option is turned on: by default a deleted row leaves its terms in
 * the index's older segments (only a delete marker is added) until a merge, so a forgotten word
 * would stay in the file; with it, a delete removes the entries themselves.
 */
export const createForgetSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE forget_tombstones (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    selector TEXT NOT NULL CHECK (json_valid(selector)),
    counts TEXT NOT NULL CHECK (json_valid(counts)),
    forgotten_at TEXT NOT NULL,
    scrubbed_at TEXT
  ) STRICT`
  yield* sql`CREATE TABLE forgotten_spans (
    source_file_id INTEGER NOT NULL REFERENCES source_files (id) ON DELETE CASCADE,
    byte_start INTEGER NOT NULL CHECK (byte_start >= 0),
    byte_end INTEGER NOT NULL CHECK (byte_end > byte_start),
    tombstone_id INTEGER NOT NULL REFERENCES forget_tombstones (id)
  ) STRICT`
  yield* sql`CREATE INDEX forgotten_spans_by_file ON forgotten_spans (source_file_id, byte_start)`
  yield* sql`CREATE TABLE forgotten_notes (
    note_id TEXT PRIMARY KEY NOT NULL,
    tombstone_id INTEGER NOT NULL REFERENCES forget_tombstones (id)
  ) STRICT`
  yield* sql`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('secure-delete', 1)`
})
