import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { messageContextId } from "../domain/context-id.js"
import { storedProject } from "./note-content.js"
import {
  Authorship,
  type ListNotesRequest,
  ListNotesResponse,
  type NoteHistoryRequest,
  NoteHistoryResponse,
  NoteKind,
  NoteRevisionEntry,
  NoteSummary,
  UnknownNote
} from "./notes-contract.js"

/** Characters of a note's current text a list shows. */
export const NOTE_EXCERPT_CHARS = 200

const Tags = Schema.parseJson(Schema.Array(Schema.String))

const HistoryRow = Schema.Struct({
  revision: Schema.Int,
  update_id: Schema.String,
  kind: NoteKind,
  text: Schema.String,
  tags: Tags,
  authorship: Authorship,
  session_id: Schema.String,
  created_at: Schema.String,
  source_text: Schema.NullOr(Schema.String),
  message_id: Schema.Int
})

const SummaryRow = Schema.Struct({
  note_id: Schema.String,
  revision: Schema.Int,
  kind: NoteKind,
  tags: Tags,
  authorship: Authorship,
  updated_at: Schema.String,
  created_at: Schema.String,
  session_id: Schema.String,
  project: Schema.NullOr(Schema.String),
  text: Schema.String,
  message_id: Schema.Int
})

/**
 * Every revision of a note, oldest first, as stored (each with its own message, which keeps the
 * text after a newer revision took its chunks). A note with no revision (never logged, or
 * forgotten) is `UnknownNote`.
 */
export const noteHistory = (request: NoteHistoryRequest) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const noteId = request.note_id.toLowerCase()
    const rows = yield* SqlSchema.findAll({
      Request: Schema.String,
      Result: HistoryRow,
      execute: (id) => sql`
        SELECT u.revision, u.update_id, u.kind, m.text, u.tags, u.authorship, u.session_id, u.created_at,
               u.source_text, m.id AS message_id
        FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
        WHERE u.note_id = ${id}
        ORDER BY u.revision`
    })(noteId)
    const current = rows.at(-1)
    if (current === undefined) return yield* new UnknownNote({ note_id: noteId })
    return new NoteHistoryResponse({
      note_id: noteId,
      current_revision: current.revision,
      kind: current.kind,
      revisions: rows.map(
        (r) =>
          new NoteRevisionEntry({
            revision: r.revision,
            update_id: r.update_id,
            text: r.text,
            tags: r.tags,
            authorship: r.authorship,
            session_id: r.session_id,
            created_at: r.created_at,
            source_text: r.source_text,
            context_id: messageContextId(r.message_id)
          })
      )
    })
  })

/**
 * Notes by their current revision, newest change first: optionally those whose current revision
 * was written in one blctx session, or whose project is a directory or under it (compared
 * redacted, as stored).
 */
export const listNotes = (request: ListNotesRequest) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = [sql`u.revision = (SELECT max(v.revision) FROM authored_updates v WHERE v.note_id = u.note_id)`]
    if (request.session_id !== undefined) where.push(sql`u.session_id = ${request.session_id.toLowerCase()}`)
    if (request.project !== undefined) {
      const p = storedProject(request.project)
      where.push(sql`(m.cwd = ${p} OR substr(m.cwd, 1, ${p.length + 1}) = ${`${p}/`})`)
    }
    const rows = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: SummaryRow,
      execute: () => sql`
        SELECT u.note_id, u.revision, u.kind, u.tags, u.authorship, u.created_at AS updated_at,
               (SELECT f.created_at FROM authored_updates f WHERE f.note_id = u.note_id AND f.revision = 1) AS created_at,
               u.session_id, m.cwd AS project, m.text, m.id AS message_id
        FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
        WHERE ${sql.and(where)}
        ORDER BY u.created_at DESC, u.note_id
        LIMIT ${request.limit + 1} OFFSET ${request.offset}`
    })(undefined)
    return new ListNotesResponse({
      notes: rows.slice(0, request.limit).map(
        (r) =>
          new NoteSummary({
            note_id: r.note_id,
            current_revision: r.revision,
            kind: r.kind,
            tags: r.tags,
            authorship: r.authorship,
            updated_at: r.updated_at,
            created_at: r.created_at,
            session_id: r.session_id,
            project: r.project,
            excerpt: r.text.slice(0, NOTE_EXCERPT_CHARS),
            excerpt_truncated: r.text.length > NOTE_EXCERPT_CHARS,
            context_id: messageContextId(r.message_id)
          })
      ),
      offset: request.offset,
      limit: request.limit,
      next_offset: rows.length > request.limit ? request.offset + request.limit : null
    })
  })
