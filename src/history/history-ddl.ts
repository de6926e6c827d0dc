import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The `chunks` table and its triggers (and the content columns of `messages`), declared once: migration 3 creates them, and migration 4
 * rebuilds the table unchanged (under a temporary name that references the rebuilt messages,
 * renamed after) and creates the triggers again. Names are trusted constants of the migrations,
 * spliced as written so the stored schema text is what it always was. Released migrations run
 * this text: never edit it; a change to `chunks` is a new migration.
 */
export const createChunksTable = (sql: SqlClient.SqlClient, table: string, messages: string) =>
  sql`CREATE TABLE ${sql.literal(table)} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id INTEGER NOT NULL REFERENCES ${sql.literal(messages)} (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    text TEXT NOT NULL,
    tokenizer TEXT NOT NULL,
    vector_fingerprint TEXT,
    UNIQUE (message_id, ordinal)
  ) STRICT`

/**
 * The columns of a message's content, the same in migration 3's `messages` and migration 4's
 * rebuild of it (which changes only provenance around them). Spliced inside each CREATE TABLE
 * with its indentation, so the stored schema text is unchanged.
 */
export const MESSAGE_CONTENT_COLUMNS = `role TEXT NOT NULL,
    kind TEXT NOT NULL,
    phase TEXT,
    text TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    redactions INTEGER NOT NULL,
    cwd TEXT,
    timestamp TEXT,`

/** The triggers that keep the FTS5 index `chunks_fts` in step with `chunks`. */
export const createChunksFtsTriggers = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    yield* sql`CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
  END`
    yield* sql`CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
  END`
    yield* sql`CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
  END`
  })

/** The trigger that remembers a removed chunk's vector, for the importer and repair to prune. */
export const createChunksRemovedTrigger = (sql: SqlClient.SqlClient) =>
  sql`CREATE TRIGGER chunks_removed AFTER DELETE ON chunks WHEN old.vector_fingerprint IS NOT NULL BEGIN
    INSERT OR REPLACE INTO removed_chunks (chunk_id, vector_fingerprint) VALUES (old.id, old.vector_fingerprint);
  END`
