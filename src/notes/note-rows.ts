import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { messageContextId } from "../domain/context-id.js"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import { ChunkIdRow, idRows, rowsOf } from "../sql/sql-rows.js"
import type { PendingChunks } from "../store/chunk-rows.js"
import type { ImportEmbedding } from "../vectors/import-services.js"
import type { ChunkId } from "../vectors/vector-index.js"
import { NOTE_ROLE } from "./note-content.js"
import { Authorship, NoteKind } from "./notes-contract.js"

/** How a note's text was cut into chunks: the pieces and the tokenizer that cut them. */
export type NoteChunks = PendingChunks

/** An update (a revision of a note) with the message that carries its text. */
export const UpdateRow = Schema.Struct({
  update_id: Schema.String,
  note_id: Schema.String,
  revision: Schema.Int,
  session_id: Schema.String,
  kind: NoteKind,
  authorship: Authorship,
  tags: Schema.parseJson(Schema.Array(Schema.String)),
  source_text: Schema.NullOr(Schema.String),
  content_sha256: Schema.String,
  created_at: Schema.String,
  message_id: Schema.Int,
  text: Schema.String
})
export type UpdateRow = typeof UpdateRow.Type

const removedChunkRows = rowsOf(ChunkIdRow)

/**
 * The answer's fields for a stored update: `LogUpdateResponse`'s, which `UpdateNoteResponse`
 * extends with the revision it replaced.
 */
export const updateResponseFields = (
  row: Omit<UpdateRow, "source_text" | "content_sha256" | "text">,
  redactions: number,
  created: boolean
) => ({
  update_id: row.update_id,
  note_id: row.note_id,
  revision: row.revision,
  source_type: "authored_update" as const,
  session_id: row.session_id,
  context_id: messageContextId(row.message_id),
  kind: row.kind,
  authorship: row.authorship,
  tags: row.tags,
  created_at: row.created_at,
  redactions,
  created
})

/** One revision of a note as it is stored: its message and its `authored_updates` row. */
export interface RevisionRow {
  readonly note_id: string
  readonly revision: number
  readonly update_id: string
  readonly session_id: string
  readonly kind: NoteKind
  readonly authorship: Authorship
  readonly tags: ReadonlyArray<string>
  readonly text: string
  readonly text_sha256: string
  readonly text_redactions: number
  readonly source_text: string | null
  readonly source_text_sha256: string | null
  readonly content_sha256: string
  readonly created_at: string
  /** The session's project, stored as the message's cwd so project filters find the note. */
  readonly project: string | null
}

/**
 * Writes a revision's message (source type `authored_update`, no source file, provenance
 * `note_id` + revision) and its `authored_updates` row, in the caller's transaction; returns the
 * message id. Every writer of notes (log_update, update_note, the notes import) stores them so.
 */
export const insertRevision = (sql: SqlClient.SqlClient, row: RevisionRow) =>
  Effect.gen(function* () {
    const [message] = yield* idRows(
      sql`INSERT INTO messages ${sql.insert({
        source_type: AUTHORED_UPDATE,
        agent: null,
        note_id: row.note_id,
        note_revision: row.revision,
        session_id: row.session_id,
        turn_number: 0,
        role: NOTE_ROLE,
        kind: row.kind,
        text: row.text,
        text_sha256: row.text_sha256,
        redactions: row.text_redactions,
        cwd: row.project,
        timestamp: row.created_at
      })} RETURNING id`
    )
    yield* sql`INSERT INTO authored_updates ${sql.insert({
      update_id: row.update_id,
      note_id: row.note_id,
      revision: row.revision,
      session_id: row.session_id,
      kind: row.kind,
      authorship: row.authorship,
      tags: JSON.stringify(row.tags),
      source_text: row.source_text,
      source_text_sha256: row.source_text_sha256,
      content_sha256: row.content_sha256,
      created_at: row.created_at
    })}`
    return message?.id ?? 0
  })

/**
 * Removes from the loaded model's vector index, in the caller's transaction, the vectors of chunks
 * just deleted (the `removed_chunks` trigger listed them), as the importer does. Vectors of other
 * fingerprints stay listed for repair to prune.
 */
export const pruneRemovedVectors = (
  sql: SqlClient.SqlClient,
  embedding: Option.Option<Pick<ImportEmbedding, "fingerprint" | "vectors">>
) =>
  Effect.gen(function* () {
    if (Option.isNone(embedding)) return
    const { fingerprint, vectors } = embedding.value
    const removed = (yield* removedChunkRows(sql`
      SELECT chunk_id FROM removed_chunks WHERE vector_fingerprint = ${fingerprint.key}`)).map((r) => r.chunk_id)
    if (removed.length === 0) return
    yield* vectors.remove(fingerprint, removed as Array<ChunkId>)
    yield* sql`DELETE FROM removed_chunks WHERE chunk_id IN ${sql.in(removed)}`
  })
