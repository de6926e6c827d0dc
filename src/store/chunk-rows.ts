import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** How a text was cut into chunks: the pieces (character ranges and text) and the tokenizer that cut them. */
export interface PendingChunks {
  readonly tokenizer: string
  readonly pieces: ReadonlyArray<{ readonly start: number; readonly end: number; readonly text: string }>
}

type Piece = PendingChunks["pieces"][number]

/**
 * Writes one chunk of a message, returning its id: its vector's fingerprint when the vector is
 * written with it, null while the vector is pending.
 */
export const insertChunk = (
  sql: SqlClient.SqlClient,
  chunk: { messageId: number; ordinal: number; piece: Piece; tokenizer: string; vectorFingerprint: string | null }
) =>
  sql`INSERT INTO chunks ${sql.insert({
    message_id: chunk.messageId,
    ordinal: chunk.ordinal,
    char_start: chunk.piece.start,
    char_end: chunk.piece.end,
    text: chunk.piece.text,
    tokenizer: chunk.tokenizer,
    vector_fingerprint: chunk.vectorFingerprint
  })} RETURNING id`

/** A message's chunks, with their vectors pending (embedded after the commit, or by repair). */
export const insertPendingChunks = (sql: SqlClient.SqlClient, messageId: number, chunks: PendingChunks) =>
  Effect.forEach(
    chunks.pieces,
    (piece, ordinal) =>
      insertChunk(sql, { messageId, ordinal, piece, tokenizer: chunks.tokenizer, vectorFingerprint: null }),
    { discard: true }
  )

/**
 * Cuts a message's chunks again (repair on a new tokenizer, redaction of its text), in the
 * caller's transaction: its chunks go (their FTS rows by trigger, their vectors listed in
 * `removed_chunks`) and the new ones wait for vectors. A message whose chunks were removed since
 * it was read (a note's superseded revision, a forgotten message) stays without.
 */
export const recutChunks = (sql: SqlClient.SqlClient, messageId: number, chunks: PendingChunks) =>
  Effect.gen(function* () {
    const removed = yield* sql`DELETE FROM chunks WHERE message_id = ${messageId} RETURNING id`
    if (removed.length === 0) return
    yield* insertPendingChunks(sql, messageId, chunks)
  })
