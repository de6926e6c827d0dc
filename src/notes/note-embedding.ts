import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { idRows, rowsOf, TextRow } from "../sql/sql-rows.js"
import { type ImportChunking, type ImportEmbedding, WHOLE_MESSAGE_TOKENIZER } from "../vectors/import-services.js"
import type { ChunkId } from "../vectors/vector-index.js"
import type { NoteChunks } from "./note-rows.js"

const textRows = rowsOf(TextRow)

/**
 * A note's text cut by the daemon's current chunking (the model's tokenizer once one is loaded,
 * whole messages before). A tokenizer that fails does not refuse the note: it is stored as one
 * whole-message chunk, which repair re-chunks on the model's boundaries later, as it does every
 * message chunked before the model was installed.
 */
export const chunkNote = (chunking: ImportChunking, text: string): Effect.Effect<NoteChunks> =>
  chunking.chunkAll([text]).pipe(
    Effect.map((all) => ({ tokenizer: chunking.tokenizer, pieces: all[0] ?? [] })),
    Effect.catchAll((e) =>
      Effect.logWarning("note stored as one chunk: the tokenizer failed").pipe(
        Effect.annotateLogs({ tokenizer: chunking.tokenizer, reason: e.message }),
        Effect.as({
          tokenizer: WHOLE_MESSAGE_TOKENIZER,
          pieces: text.length === 0 ? [] : [{ start: 0, end: text.length, text }]
        })
      )
    )
  )

/**
 * Embeds the chunks of one message that have no vector of the loaded model, after the message
 * was committed: the model runs outside any transaction, then the vectors and the chunks'
 * fingerprints are written in one short transaction on the writer connection, for the chunks
 * that still lack them then (a repair may have embedded or re-cut them meanwhile). Returns how
 * many chunks it embedded. A failure leaves the chunks pending: the daemon's index watcher
 * queues a repair for chunks without a vector of the loaded model, so nothing is lost.
 */
export const embedMessageChunks = (sql: SqlClient.SqlClient, messageId: number, embedding: ImportEmbedding) =>
  Effect.gen(function* () {
    const key = embedding.fingerprint.key
    const chunks = yield* textRows(sql`
      SELECT id, text FROM chunks
      WHERE message_id = ${messageId} AND (vector_fingerprint IS NULL OR vector_fingerprint <> ${key})
      ORDER BY id`)
    if (chunks.length === 0) return 0
    const vectors = yield* embedding.embed(chunks.map((c) => c.text))
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const pending = new Set(
          (yield* idRows(sql`
            SELECT id FROM chunks
            WHERE id IN ${sql.in(chunks.map((c) => c.id))}
              AND (vector_fingerprint IS NULL OR vector_fingerprint <> ${key})`)).map((r) => r.id)
        )
        const items = chunks.flatMap((c, i) => {
          const vector = vectors[i]
          return pending.has(c.id) && vector !== undefined ? [{ id: c.id as ChunkId, vector }] : []
        })
        if (items.length === 0) return 0
        yield* embedding.vectors.upsert(embedding.fingerprint, items)
        yield* sql`UPDATE chunks SET vector_fingerprint = ${key} WHERE id IN ${sql.in(items.map((i) => i.id))}`
        return items.length
      })
    )
  })
