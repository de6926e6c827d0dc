import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import type { ImportEmbedding, TextPiece } from "../vectors/import-services.js"
import type { ChunkId } from "../vectors/vector-index.js"
import { NOTE_ROLE } from "./note-content.js"
import { Authorship, NoteKind } from "./notes-contract.js"

/** How a note's text was cut into chunks: the pieces and the tokenizer that cut them. */
export interface NoteChunks {
  readonly tokenizer: string
  readonly pieces: ReadonlyArray<TextPiece>
}

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
    const [message] = yield* sql<{ id: number }>`INSERT INTO messages ${sql.insert({
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

/** A message's chunks, with their vectors pending (embedded after the commit, or by repair). */
export const insertPendingChunks = (sql: SqlClient.SqlClient, messageId: number, chunks: NoteChunks) =>
  Effect.forEach(
    chunks.pieces,
    (piece, ordinal) =>
      sql`INSERT INTO chunks ${sql.insert({
        message_id: messageId,
        ordinal,
        char_start: piece.start,
        char_end: piece.end,
        text: piece.text,
        tokenizer: chunks.tokenizer,
        vector_fingerprint: null
      })}`,
    { discard: true }
  )

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
    const removed = (yield* sql<{ chunk_id: number }>`
      SELECT chunk_id FROM removed_chunks WHERE vector_fingerprint = ${fingerprint.key}`).map((r) => r.chunk_id)
    if (removed.length === 0) return
    yield* vectors.remove(fingerprint, removed as Array<ChunkId>)
    yield* sql`DELETE FROM removed_chunks WHERE chunk_id IN ${sql.in(removed)}`
  })
