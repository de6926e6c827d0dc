import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import {
  createChunksFtsTriggers,
  createChunksRemovedTrigger,
  createChunksTable,
  MESSAGE_CONTENT_COLUMNS
} from "./history-ddl.js"

/**
 * Imported history: source files with their checkpoints, sessions, the selected messages with
 * provenance, their chunks, and an FTS5 index over the chunks. SQLite is the truth: every vector
 * in a vector index can be rebuilt from `chunks`.
 *
 * This is migration 3 as it was released, and stays so: migration 4
 * (`source-neutral-schema.ts`) rebuilds `messages` (open `source_type`, `agent`, provenance a
 * transcript span or a note revision) and `chunks` after it.
 */
export const createHistorySchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE source_files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    session_id TEXT,
    size INTEGER NOT NULL,
    mtime_ms REAL NOT NULL,
    ino INTEGER NOT NULL,
    indexed_bytes INTEGER NOT NULL,
    prefix_sha256 TEXT NOT NULL,
    resume_byte INTEGER NOT NULL,
    resume_line INTEGER NOT NULL,
    resume_turn INTEGER NOT NULL,
    records INTEGER NOT NULL,
    unclassified INTEGER NOT NULL,
    parse_errors INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('indexed', 'partial', 'conflict')),
    note TEXT,
    imported_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX source_files_by_session ON source_files (session_id)`
  yield* sql`CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    source_file_id INTEGER NOT NULL REFERENCES source_files (id) ON DELETE CASCADE,
    cwd TEXT,
    cli_version TEXT,
    started_at TEXT,
    forked_from_id TEXT,
    subagent TEXT
  ) STRICT`
  // AUTOINCREMENT: an id is never reused, so a stale vector can never match a new chunk.
  yield* sql`CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source_file_id INTEGER NOT NULL REFERENCES source_files (id) ON DELETE CASCADE,
    session_id TEXT,
    turn_number INTEGER NOT NULL,
    turn_id TEXT,
    ${sql.literal(MESSAGE_CONTENT_COLUMNS)}
    line INTEGER NOT NULL,
    byte_start INTEGER NOT NULL,
    byte_end INTEGER NOT NULL,
    source_type TEXT NOT NULL DEFAULT 'codex_transcript' CHECK (source_type IN ('codex_transcript', 'authored_update')),
    UNIQUE (source_file_id, byte_start)
  ) STRICT`
  yield* sql`CREATE INDEX messages_by_session ON messages (session_id, turn_number, line)`
  yield* sql`CREATE INDEX messages_by_time ON messages (timestamp)`
  yield* createChunksTable(sql, "chunks", "messages")
  yield* sql`CREATE INDEX chunks_pending ON chunks (vector_fingerprint)`
  yield* sql`CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61')`
  yield* createChunksFtsTriggers(sql)
  // Vectors of removed chunks are pruned from the vector index by the importer and by repair.
  yield* sql`CREATE TABLE removed_chunks (
    chunk_id INTEGER PRIMARY KEY,
    vector_fingerprint TEXT NOT NULL
  ) STRICT`
  yield* createChunksRemovedTrigger(sql)
})
