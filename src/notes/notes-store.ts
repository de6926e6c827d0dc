import { randomUUID } from "node:crypto"
import { type SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { messageContextId } from "../domain/context-id.js"
import { makeWriterErrors } from "../store/writer-errors.js"
import { differingFields, type StoredUpdate, sessionBinding } from "./note-content.js"
import { type LoadedVectors, reviseNote } from "./note-revision-store.js"
import { insertPendingChunks, insertRevision, type NoteChunks, UpdateRow } from "./note-rows.js"
import {
  LogUpdateResponse,
  type OpenSessionRequest,
  OpenSessionResponse,
  SessionBindingConflict,
  UnknownContextSession,
  UpdateConflict,
  type UpdateNoteRequest
} from "./notes-contract.js"

const SessionRow = Schema.Struct({
  id: Schema.String,
  binding_key: Schema.String,
  project: Schema.NullOr(Schema.String),
  parent_session_id: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
type SessionRow = typeof SessionRow.Type

/** What `logUpdate` wrote (or found): the answer, and the message whose chunks need vectors. */
export interface LoggedUpdate {
  readonly response: LogUpdateResponse
  readonly messageId: number
}

export interface NotesStoreOptions {
  /** The daemon's writer connection. */
  readonly sql: SqlClient.SqlClient
  /** The database file, named in every StoreError. */
  readonly database: string
}

/**
 * The writes of authored updates: `context_sessions`, `authored_updates` and the note's message
 * and chunks, on the daemon's writer connection. Each call is one transaction, committed before
 * it returns: the answer is an acknowledgement that the note is stored. Embedding comes after,
 * outside (`note-embedding.ts`); the chunks are written with their vectors pending.
 *
 * Writes are serialized with every other write on that connection (an import's file, a repair
 * batch, a job's checkpoint) by the SQLite client itself: it holds its one connection behind a
 * one-permit semaphore, and a transaction keeps the permit from BEGIN to COMMIT, so a note waits
 * for the transaction in progress to end and never lands inside it.
 */
export const makeNotesStore = ({ sql, database }: NotesStoreOptions) => {
  const isoNow = Effect.map(DateTime.now, DateTime.formatIso)

  const { transaction } = makeWriterErrors({ sql, database })

  const sessionByBinding = SqlSchema.findOne({
    Request: Schema.String,
    Result: SessionRow,
    execute: (key) => sql`SELECT * FROM context_sessions WHERE binding_key = ${key}`
  })
  const sessionById = SqlSchema.findOne({
    Request: Schema.String,
    Result: SessionRow,
    execute: (id) => sql`SELECT * FROM context_sessions WHERE id = ${id}`
  })
  const updateById = SqlSchema.findOne({
    Request: Schema.String,
    Result: UpdateRow,
    execute: (id) => sql`
      SELECT u.update_id, u.note_id, u.revision, u.session_id, u.kind, u.authorship, u.tags, u.source_text,
             u.content_sha256, u.created_at, m.id AS message_id, m.text
      FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
      WHERE u.update_id = ${id}`
  })

  const sessionResponse = (row: SessionRow, created: boolean) =>
    new OpenSessionResponse({
      session_id: row.id,
      binding_key: row.binding_key,
      project: row.project,
      parent_session_id: row.parent_session_id,
      created_at: row.created_at,
      created
    })

  /**
   * Opens the session bound to `binding_key`, or returns the one it already has. Metadata given on
   * a reuse must be what the session was opened with; metadata left out matches.
   */
  const openSession = (request: OpenSessionRequest) =>
    transaction(
      "could not open the session",
      Effect.gen(function* () {
        const wanted = sessionBinding(request)
        const existing = yield* sessionByBinding(wanted.binding_key)
        if (Option.isSome(existing)) {
          const row = existing.value
          const conflicts = (["project", "parent_session_id"] as const).flatMap((field) => {
            const requested = wanted[field]
            return requested === null || requested === row[field] ? [] : [{ field, opened_with: row[field], requested }]
          })
          if (conflicts.length > 0) {
            return yield* new SessionBindingConflict({ binding_key: row.binding_key, session_id: row.id, conflicts })
          }
          return sessionResponse(row, false)
        }
        if (wanted.parent_session_id !== null && Option.isNone(yield* sessionById(wanted.parent_session_id))) {
          return yield* new UnknownContextSession({ session_id: wanted.parent_session_id, field: "parent_session_id" })
        }
        const row: SessionRow = { id: randomUUID(), ...wanted, created_at: yield* isoNow }
        yield* sql`INSERT INTO context_sessions ${sql.insert(row)}`
        return sessionResponse(row, true)
      })
    )

  const updateResponse = (row: Omit<UpdateRow, "source_text" | "content_sha256" | "text">, update: StoredUpdate) =>
    new LogUpdateResponse({
      update_id: row.update_id,
      note_id: row.note_id,
      revision: row.revision,
      source_type: "authored_update",
      session_id: row.session_id,
      context_id: messageContextId(row.message_id),
      kind: row.kind,
      authorship: row.authorship,
      tags: row.tags,
      created_at: row.created_at,
      redactions: update.redactions,
      created: false
    })

  /**
   * Logs revision 1 of a new note: its message (source type `authored_update`, the session's
   * project as its cwd, no source file), its chunks with vectors pending, and its update row, in
   * one transaction. The same update id with the same content returns what was logged then;
   * with other content it is refused, naming the fields that differ.
   */
  const logUpdate = (update: StoredUpdate, chunks: NoteChunks) =>
    transaction(
      "could not log the update",
      Effect.gen(function* () {
        const existing = yield* updateById(update.update_id)
        if (Option.isSome(existing)) {
          const row = existing.value
          if (row.content_sha256 !== update.content_sha256) {
            return yield* new UpdateConflict({
              update_id: row.update_id,
              note_id: row.note_id,
              differing: differingFields(row, update)
            })
          }
          return { response: updateResponse(row, update), messageId: row.message_id } satisfies LoggedUpdate
        }
        const session = yield* sessionById(update.session_id)
        if (Option.isNone(session)) {
          return yield* new UnknownContextSession({ session_id: update.session_id, field: "session_id" })
        }
        const noteId = randomUUID()
        const createdAt = yield* isoNow
        const messageId = yield* insertRevision(sql, {
          ...update,
          note_id: noteId,
          revision: 1,
          created_at: createdAt,
          project: session.value.project
        })
        yield* insertPendingChunks(sql, messageId, chunks)
        const response = updateResponse(
          { ...update, note_id: noteId, revision: 1, created_at: createdAt, message_id: messageId },
          update
        )
        return { response: new LogUpdateResponse({ ...response, created: true }), messageId } satisfies LoggedUpdate
      })
    )

  /** Adds a revision to a note (`reviseNote`), in one transaction committed before it returns. */
  const updateNote = (request: UpdateNoteRequest, chunks: NoteChunks, loaded: Option.Option<LoadedVectors>) =>
    transaction(
      "could not update the note",
      Effect.flatMap(isoNow, (createdAt) => reviseNote(sql, request, chunks, loaded, createdAt, database))
    )

  return { openSession, logUpdate, updateNote } as const
}

export type NotesStore = ReturnType<typeof makeNotesStore>
