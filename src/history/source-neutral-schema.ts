import { SqlClient } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import { countOf, rowsOf } from "../sql/sql-rows.js"
import {
  createChunksFtsTriggers,
  createChunksRemovedTrigger,
  createChunksTable,
  MESSAGE_CONTENT_COLUMNS
} from "./history-ddl.js"

/** A row of `PRAGMA foreign_key_check`: a reference that points nowhere. */
const danglingRows = rowsOf(Schema.Struct({ table: Schema.String }))

/** Migration 4 found the rebuilt tables different from what it copied: it rolls back. */
export class SourceNeutralMigrationError extends Data.TaggedError("SourceNeutralMigrationError")<{
  readonly message: string
}> {}

/**
 * Migration 4: source-neutral messages. Migration 3 assumed one Codex transcript per row:
 * `source_type` was a closed CHECK list and every message needed a source file and a byte span.
 * From here `messages` holds any source:
 *
 * - `source_type` is an open set (no CHECK; see `source-type.ts`); `agent` names the agent that
 *   wrote a transcript (`codex`, `claude`).
 * - Provenance is a union, enforced by CHECKs: a transcript span (`source_file_id`, `line`,
 *   `byte_start`, `byte_end` and an `agent`, all set) or a note revision (`note_id`,
 *   `note_revision`, both set, no source file). Exactly one of the two.
 * - The defaults (`codex_transcript`, `codex`) are what rows written without them are: the
 *   importer of release 3 writes neither, and still runs against this schema (a daemon started
 *   before an upgrade, or until the importer passes its format's `sourceType` and `agent`).
 *
 * SQLite cannot drop a CHECK, so the table is rebuilt the documented way (create, copy, drop,
 * rename), keeping every id and the AUTOINCREMENT high-water mark. `chunks` is rebuilt with it,
 * unchanged: better-sqlite3 turns foreign keys on, the Migrator runs every migration inside one
 * transaction (where `PRAGMA foreign_keys` cannot be changed), and with foreign keys on,
 * `DROP TABLE messages` deletes every row first, which would cascade to `chunks`. Copying `chunks`
 * to a table that references the new `messages` before dropping either avoids that. The FTS5
 * index is not touched: it stores chunk ids and reads text from the table named `chunks`, and
 * both are the same afterwards; the chunks' triggers are dropped with the old table (so neither
 * the FTS index nor `removed_chunks` sees the copy) and created again. Vector indexes key on
 * chunk ids, which are kept.
 */
export const migrateToSourceNeutral = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const count = (table: string) => countOf(sql`SELECT count(*) AS n FROM ${sql(table)}`)
  const before = { messages: yield* count("messages"), chunks: yield* count("chunks") }

  yield* sql`CREATE TABLE messages_v4 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source_type TEXT NOT NULL DEFAULT 'codex_transcript',
    agent TEXT DEFAULT 'codex',
    source_file_id INTEGER REFERENCES source_files (id) ON DELETE CASCADE,
    line INTEGER,
    byte_start INTEGER,
    byte_end INTEGER,
    note_id TEXT,
    note_revision INTEGER,
    session_id TEXT,
    turn_number INTEGER NOT NULL DEFAULT 0,
    turn_id TEXT,
    ${sql.literal(MESSAGE_CONTENT_COLUMNS)}
    CHECK ((source_file_id IS NULL) = (line IS NULL)
       AND (source_file_id IS NULL) = (byte_start IS NULL)
       AND (source_file_id IS NULL) = (byte_end IS NULL)),
    CHECK (source_file_id IS NULL OR agent IS NOT NULL),
    CHECK ((note_id IS NULL) = (note_revision IS NULL)),
    CHECK ((source_file_id IS NULL) <> (note_id IS NULL)),
    UNIQUE (source_file_id, byte_start),
    UNIQUE (note_id, note_revision)
  ) STRICT`
  // Every row of release 3 is a span of a transcript the Codex importer wrote.
  yield* sql`INSERT INTO messages_v4 (id, source_type, agent, source_file_id, line, byte_start, byte_end,
      session_id, turn_number, turn_id, role, kind, phase, text, text_sha256, redactions, cwd, timestamp)
    SELECT id, source_type, 'codex', source_file_id, line, byte_start, byte_end,
      session_id, turn_number, turn_id, role, kind, phase, text, text_sha256, redactions, cwd, timestamp
    FROM messages`
  yield* createChunksTable(sql, "chunks_v4", "messages_v4")
  yield* sql`INSERT INTO chunks_v4 (id, message_id, ordinal, char_start, char_end, text, tokenizer, vector_fingerprint)
    SELECT id, message_id, ordinal, char_start, char_end, text, tokenizer, vector_fingerprint FROM chunks`
  // AUTOINCREMENT: the new tables continue after the highest id ever given, not the highest kept.
  yield* sql`DELETE FROM sqlite_sequence WHERE name IN ('messages_v4', 'chunks_v4')`
  yield* sql`INSERT INTO sqlite_sequence (name, seq)
    SELECT name || '_v4', seq FROM sqlite_sequence WHERE name IN ('messages', 'chunks')`
  // Children first: nothing references `chunks`, and once it is gone nothing references `messages`.
  yield* sql`DROP TABLE chunks`
  yield* sql`DROP TABLE messages`
  // Renaming the parent rewrites the child's REFERENCES clause (foreign keys are on).
  yield* sql`ALTER TABLE messages_v4 RENAME TO messages`
  yield* sql`ALTER TABLE chunks_v4 RENAME TO chunks`

  yield* sql`CREATE INDEX messages_by_session ON messages (session_id, turn_number, line)`
  yield* sql`CREATE INDEX messages_by_time ON messages (timestamp)`
  yield* sql`CREATE INDEX chunks_pending ON chunks (vector_fingerprint)`
  yield* createChunksFtsTriggers(sql)
  yield* createChunksRemovedTrigger(sql)

  const after = { messages: yield* count("messages"), chunks: yield* count("chunks") }
  const dangling = yield* danglingRows(sql`PRAGMA foreign_key_check`)
  if (after.messages !== before.messages || after.chunks !== before.chunks || dangling.length > 0) {
    return yield* new SourceNeutralMigrationError({
      message: `rebuilding messages and chunks changed them (messages ${before.messages} → ${after.messages}, chunks ${before.chunks} → ${after.chunks}, ${dangling.length} broken references); nothing was changed`
    })
  }
})
