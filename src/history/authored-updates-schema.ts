import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Migration 5: authored updates. Migration 4 already lets `messages` carry a note (source type
 * `authored_update`, no source file, provenance `note_id` + `note_revision`); this adds what a
 * note has besides its text:
 *
 * - `context_sessions`: the sessions blctx opens for agents (`open_session`). `id` is blctx's
 *   own random UUID; `binding_key` (the caller's UUID, unique) finds it again on a retry or a
 *   resumed conversation. An agent's own session id is never a key here: it is provenance only,
 *   on transcript messages. `project` is redacted like a transcript's cwd, so project filters
 *   compare like with like; a parent must be a blctx session too.
 * - `authored_updates`: one row per write of a note. `log_update` writes revision 1 of a new
 *   note; `update_note` adds rows for the same `note_id` with the next revision. Each row
 *   names the message that carries that revision's text by `(note_id, revision)`, the key
 *   migration 4 made unique on `messages`, with a foreign key, so a note's metadata (tags,
 *   source_text) goes when its message goes, and a row without its message cannot exist.
 *   `update_id` (the caller's UUID) makes a write idempotent: `content_sha256` is the hash of
 *   the stored (redacted) content, compared when the same id comes again.
 *
 * Text lives only in `messages` (and its chunks, FTS and vectors, as for transcripts); tags and
 * `source_text` are redacted before they are stored here. No existing table changes. A later
 * migration that rebuilds `messages` the way migration 4 did must rebuild `authored_updates`
 * with it: with foreign keys on, dropping `messages` would cascade here.
 */
export const createAuthoredUpdatesSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE context_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    binding_key TEXT NOT NULL UNIQUE,
    project TEXT,
    parent_session_id TEXT REFERENCES context_sessions (id),
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE authored_updates (
    update_id TEXT PRIMARY KEY NOT NULL,
    note_id TEXT NOT NULL,
    revision INTEGER NOT NULL CHECK (revision >= 1),
    session_id TEXT NOT NULL REFERENCES context_sessions (id),
    kind TEXT NOT NULL CHECK (kind IN ('status', 'decision', 'note')),
    authorship TEXT NOT NULL CHECK (authorship IN ('agent_generated', 'user_requested')),
    tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags) AND json_type(tags) = 'array'),
    source_text TEXT,
    source_text_sha256 TEXT,
    content_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CHECK ((source_text IS NULL) = (source_text_sha256 IS NULL)),
    UNIQUE (note_id, revision),
    FOREIGN KEY (note_id, revision) REFERENCES messages (note_id, note_revision) ON DELETE CASCADE
  ) STRICT`
  yield* sql`CREATE INDEX authored_updates_by_session ON authored_updates (session_id, created_at)`
  yield* sql`CREATE INDEX context_sessions_by_parent ON context_sessions (parent_session_id)`
})
