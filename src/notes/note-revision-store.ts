import { randomUUID } from "node:crypto"
import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { ModelFingerprint } from "../embedding/fingerprint.js"
import { firstRowOf } from "../sql/sql-rows.js"
import { insertPendingChunks } from "../store/chunk-rows.js"
import { StoreError } from "../store/store-error.js"
import type { VectorIndexShape } from "../vectors/vector-index.js"
import { differingFields, storedRevision } from "./note-content.js"
import { insertRevision, type NoteChunks, pruneRemovedVectors, UpdateRow, updateResponseFields } from "./note-rows.js"
import {
  StaleRevision,
  UnknownContextSession,
  UnknownNote,
  UpdateConflict,
  type UpdateNoteRequest,
  UpdateNoteResponse
} from "./notes-contract.js"

/** A revision with the message that carries its text: the row `log_update` writes too. */
const RevisionRow = UpdateRow
type RevisionRow = UpdateRow

const firstSession = firstRowOf(Schema.Struct({ session_id: Schema.String }))
const sessionProject = firstRowOf(Schema.Struct({ project: Schema.NullOr(Schema.String) }))

/** The loaded model's vector index: the old revision's vectors are removed from it in the update's transaction. */
export interface LoadedVectors {
  readonly fingerprint: ModelFingerprint
  readonly vectors: VectorIndexShape
}

/** What `reviseNote` wrote (or found): the answer, and the message whose chunks need vectors. */
export interface RevisedNote {
  readonly response: UpdateNoteResponse
  readonly messageId: number
}

const responseOf = (
  row: Omit<RevisionRow, "content_sha256" | "text" | "source_text">,
  redactions: number,
  created: boolean
) => new UpdateNoteResponse({ ...updateResponseFields(row, redactions, created), previous_revision: row.revision - 1 })

/**
 * Adds revision n+1 to a note at revision n = `expected_revision`, to be run inside one write
 * transaction (`makeNotesStore.updateNote`). The writer connection runs one transaction at a
 * time, so between reading the current revision and writing the next nothing else can write:
 * of two updates from the same revision, exactly one finds it current, the other is
 * `StaleRevision`. The new revision gets its own message and chunks (vectors pending); the
 * previous revision's message stays for the history but loses its chunks, so search (lexical and
 * by vector) only ever finds the current text. The FTS rows follow the chunks by trigger; the
 * loaded model's vectors of those chunks are removed here, and the `removed_chunks` trigger
 * records them for repair to prune from any other index (another fingerprint, Qdrant).
 */
export const reviseNote = (
  sql: SqlClient.SqlClient,
  request: UpdateNoteRequest,
  chunks: NoteChunks,
  loaded: Option.Option<LoadedVectors>,
  createdAt: string,
  database: string
) =>
  Effect.gen(function* () {
    const revisionOf = SqlSchema.findOne({
      Request: Schema.Struct({ column: Schema.Literal("update_id", "note_id"), value: Schema.String }),
      Result: RevisionRow,
      execute: ({ column, value }) => sql`
        SELECT u.update_id, u.note_id, u.revision, u.session_id, u.kind, u.authorship, u.tags, u.source_text,
               u.content_sha256, u.created_at, m.id AS message_id, m.text
        FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
        WHERE ${column === "update_id" ? sql`u.update_id = ${value}` : sql`u.note_id = ${value}`}
        ORDER BY u.revision DESC LIMIT 1`
    })
    const noteId = request.note_id.toLowerCase()

    const current = yield* revisionOf({ column: "note_id", value: noteId })
    if (Option.isNone(current)) return yield* new UnknownNote({ note_id: noteId })
    const first = yield* firstSession(sql`
      SELECT session_id FROM authored_updates WHERE note_id = ${noteId} ORDER BY revision LIMIT 1`)
    const update = storedRevision(
      request,
      {
        session_id: Option.match(first, { onNone: () => current.value.session_id, onSome: (r) => r.session_id }),
        kind: current.value.kind,
        tags: current.value.tags
      },
      randomUUID()
    )

    // A retry of an update already stored answers what it stored, whatever the note's revision now.
    if (request.update_id !== undefined) {
      const stored = yield* revisionOf({ column: "update_id", value: update.update_id })
      if (Option.isSome(stored)) {
        const row = stored.value
        const differing = [
          ...(row.note_id === noteId ? [] : ["note_id"]),
          ...(row.content_sha256 === update.content_sha256 ? [] : differingFields(row, update))
        ]
        if (differing.length > 0) {
          return yield* new UpdateConflict({ update_id: row.update_id, note_id: row.note_id, differing })
        }
        return { response: responseOf(row, update.redactions, false), messageId: row.message_id } satisfies RevisedNote
      }
    }

    const previous = current.value
    if (previous.revision !== request.expected_revision) {
      return yield* new StaleRevision({
        note_id: noteId,
        expected_revision: request.expected_revision,
        current_revision: previous.revision
      })
    }
    const session = yield* sessionProject(sql`SELECT project FROM context_sessions WHERE id = ${update.session_id}`)
    if (Option.isNone(session)) {
      return yield* new UnknownContextSession({ session_id: update.session_id, field: "session_id" })
    }

    const revision = previous.revision + 1
    const messageId = yield* insertRevision(sql, {
      ...update,
      note_id: noteId,
      revision,
      source_text: null,
      source_text_sha256: null,
      created_at: createdAt,
      project: session.value.project
    })
    yield* insertPendingChunks(sql, messageId, chunks)

    // The superseded revision leaves the search: its chunks (and by trigger their FTS rows) go.
    yield* sql`DELETE FROM chunks WHERE message_id = ${previous.message_id}`
    yield* pruneRemovedVectors(sql, loaded).pipe(
      Effect.mapError(
        (e) => new StoreError({ path: database, message: `could not remove the old revision's vectors: ${e.message}` })
      )
    )

    return {
      response: responseOf(
        { ...update, note_id: noteId, revision, created_at: createdAt, message_id: messageId },
        update.redactions,
        true
      ),
      messageId
    } satisfies RevisedNote
  })
