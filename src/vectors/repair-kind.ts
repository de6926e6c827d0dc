import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { JobFailed } from "../jobs/job-errors.js"
import { type JobKindOf, registerJobKind } from "../jobs/job-kind.js"
import { countOf, idRows, rowsOf, TextRow } from "../sql/sql-rows.js"
import { recutChunks } from "../store/chunk-rows.js"
import { ChunkingFailed, EmbeddingFailed, type ImportFailure, storeFailure } from "./import-errors.js"
import { IndexingServices } from "./import-services.js"
import type { ChunkId, VectorIndexError } from "./vector-index.js"

/** Messages re-chunked per transaction, and chunks embedded per transaction. */
const MESSAGES_PER_STEP = 50
const CHUNKS_PER_STEP = 64

const RepairParams = Schema.Struct({
  /** Re-embed every chunk, not only those without a vector of the current model (a rebuild). */
  force: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

export interface RepairOptions {
  /**
   * Run inside each embedding batch's write transaction, after its write: tests compose a pause
   * here to hold the writer while a repair runs. Nothing in normal use.
   */
  readonly holdEachBatch?: Effect.Effect<void>
}
const RepairCheckpoint = Schema.Struct({
  phase: Schema.Literal("rechunk", "embed", "prune"),
  /** Last id done in the current phase. */
  cursor: Schema.Int,
  rechunked: Schema.Int,
  embedded: Schema.Int,
  pruned: Schema.Int
})
type RepairCheckpoint = typeof RepairCheckpoint.Type

const failed = (message: string) => new JobFailed({ message })

const textRows = rowsOf(TextRow)
const removedRows = rowsOf(Schema.Struct({ chunk_id: Schema.Number, vector_fingerprint: Schema.String }))

/**
 * `repair`: brings the vector index in line with SQLite, the truth. Messages chunked before the
 * model's tokenizer was installed are re-chunked on its boundaries; chunks without a vector of
 * the current fingerprint are embedded and upserted in batches; vectors of removed chunks and of
 * other fingerprints are pruned, without dropping any collection. Every batch commits with its
 * checkpoint, so an interrupted repair resumes where it stopped.
 *
 * It fails typed, like the importer: `ChunkingFailed` (the tokenizer), `EmbeddingFailed` (the
 * model), `HistoryStoreError` (the database or the vector index), each naming the ids it was at;
 * the batch in progress is rolled back and the checkpoint stays before it.
 */
export const makeRepairKind = (options: RepairOptions = {}) =>
  Effect.gen(function* () {
    const indexing = yield* IndexingServices
    const kind: JobKindOf<typeof RepairParams, typeof RepairCheckpoint, ImportFailure> = {
      name: "repair",
      params: RepairParams,
      checkpoint: RepairCheckpoint,
      run: (params, job) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { chunking, embedding } = yield* indexing.current
          if (Option.isNone(embedding)) {
            const why = Option.match(yield* indexing.unavailable, {
              onNone: () => "no verified model",
              onSome: (u) => u.detail
            })
            return yield* failed(`cannot repair vectors: ${why}. Run: blctx install codex --step embedding_model`)
          }
          const model = embedding.value
          const fp = model.fingerprint
          let state: RepairCheckpoint = Option.getOrElse(job.checkpoint, () => ({
            phase: "rechunk" as const,
            cursor: 0,
            rechunked: 0,
            embedded: 0,
            pruned: 0
          }))
          const counts = () => ({
            messages_rechunked: state.rechunked,
            vectors_embedded: state.embedded,
            vectors_pruned: state.pruned
          })
          /**
           * Progress counts one unit on both sides: chunks embedded, out of the chunks this repair
           * embeds. That total is only known once re-chunking is done (it changes the chunks), so
           * it is counted when the embed phase starts: the chunks embedded so far (on a resumed
           * job) plus those still to embed. Re-chunked messages are a count, not progress.
           */
          let total: number | undefined
          const countToEmbed = (after: number) =>
            countOf(sql`
              SELECT count(*) AS n FROM chunks
              WHERE (${params.force ? 1 : 0} = 1 OR vector_fingerprint IS NULL OR vector_fingerprint <> ${fp.key})
                AND id > ${after}`).pipe(Effect.mapError(storeFailure("count the chunks to embed")))
          const commit = (
            action: string,
            work: Effect.Effect<void, SqlError | VectorIndexError, SqlClient.SqlClient>,
            next: RepairCheckpoint
          ) =>
            job
              .commit(work.pipe(Effect.mapError(storeFailure(action))), {
                checkpoint: next,
                progressDone: next.embedded,
                // Never below what is done: done ≤ total always holds.
                ...(total === undefined ? {} : { progressTotal: Math.max(total, next.embedded) }),
                counts: {
                  messages_rechunked: next.rechunked,
                  vectors_embedded: next.embedded,
                  vectors_pruned: next.pruned
                }
              })
              .pipe(Effect.as(next))

          if (state.phase === "rechunk") {
            while (true) {
              const messages = yield* textRows(sql`
              SELECT DISTINCT m.id, m.text FROM messages m JOIN chunks c ON c.message_id = m.id
              WHERE c.tokenizer <> ${chunking.tokenizer} AND m.id > ${state.cursor}
              ORDER BY m.id LIMIT ${MESSAGES_PER_STEP}`).pipe(
                Effect.mapError(storeFailure("read the messages to re-chunk"))
              )
              if (messages.length === 0) break
              const last = messages.at(-1)?.id ?? state.cursor
              const batch = `messages ${messages[0]?.id ?? last}–${last} (re-chunking)`
              const chunked = yield* chunking
                .chunkAll(messages.map((m) => m.text))
                .pipe(Effect.mapError((e) => ChunkingFailed.of(chunking.tokenizer, batch, e)))
              const plan = messages.map((m, i) => ({ id: m.id, pieces: chunked[i] ?? [] }))
              state = yield* commit(
                `store the new chunks of ${batch}`,
                Effect.gen(function* () {
                  for (const { id, pieces } of plan) {
                    yield* recutChunks(sql, id, { tokenizer: chunking.tokenizer, pieces })
                  }
                }),
                { ...state, cursor: last, rechunked: state.rechunked + messages.length }
              )
            }
            state = { ...state, phase: "embed", cursor: 0 }
          }

          if (state.phase === "embed") {
            total = state.embedded + (yield* countToEmbed(state.cursor))
            while (true) {
              const chunks = yield* textRows(sql`
              SELECT id, text FROM chunks
              WHERE (${params.force ? 1 : 0} = 1 OR vector_fingerprint IS NULL OR vector_fingerprint <> ${fp.key})
                AND id > ${state.cursor}
              ORDER BY id LIMIT ${CHUNKS_PER_STEP}`).pipe(Effect.mapError(storeFailure("read the chunks to embed")))
              if (chunks.length === 0) break
              const last = chunks.at(-1)?.id ?? state.cursor
              const batch = `chunks ${chunks[0]?.id ?? last}–${last} (repair)`
              const vectors = yield* model
                .embed(chunks.map((c) => c.text))
                .pipe(Effect.mapError((e) => EmbeddingFailed.of(fp.label, batch, e)))
              state = yield* commit(
                `store the vectors of ${batch}`,
                Effect.gen(function* () {
                  yield* model.vectors.upsert(
                    fp,
                    chunks.flatMap((c, i) => {
                      const vector = vectors[i]
                      return vector === undefined ? [] : [{ id: c.id as ChunkId, vector }]
                    })
                  )
                  yield* sql`UPDATE chunks SET vector_fingerprint = ${fp.key} WHERE id IN ${sql.in(chunks.map((c) => c.id))}`
                  // After a write, so the transaction holds SQLite's write lock while it waits.
                  if (options.holdEachBatch !== undefined) yield* options.holdEachBatch
                }),
                { ...state, cursor: last, embedded: state.embedded + chunks.length }
              )
            }
            state = { ...state, phase: "prune", cursor: 0 }
          }
          total ??= state.embedded

          // Prune: vectors of removed chunks, points with no chunk behind them, other fingerprints' points.
          const readForPrune = storeFailure("read what to prune")
          const live = new Set(
            (yield* idRows(sql`SELECT id FROM chunks WHERE vector_fingerprint = ${fp.key}`).pipe(
              Effect.mapError(readForPrune)
            )).map((r) => r.id)
          )
          const stale = yield* removedRows(sql`SELECT chunk_id, vector_fingerprint FROM removed_chunks`).pipe(
            Effect.mapError(readForPrune)
          )
          const orphans = (yield* model.vectors.listIds(fp).pipe(Effect.mapError(readForPrune))).filter(
            (id) => !live.has(id)
          )
          const current = [
            ...new Set([
              ...orphans,
              ...stale.filter((r) => r.vector_fingerprint === fp.key).map((r) => r.chunk_id as ChunkId)
            ])
          ]
          const others: Array<{ readonly fingerprint: typeof fp; readonly ids: ReadonlyArray<ChunkId> }> = []
          for (const key of yield* model.vectors.fingerprints().pipe(Effect.mapError(readForPrune))) {
            if (key === fp.key) continue
            const other = { ...fp, key } as typeof fp
            others.push({
              fingerprint: other,
              ids: yield* model.vectors.listIds(other).pipe(Effect.mapError(readForPrune))
            })
          }
          const pruned = current.length + others.reduce((n, o) => n + o.ids.length, 0)
          state = yield* commit(
            "prune stale vectors",
            Effect.gen(function* () {
              if (current.length > 0) yield* model.vectors.remove(fp, current)
              for (const o of others) if (o.ids.length > 0) yield* model.vectors.remove(o.fingerprint, o.ids)
              yield* sql`DELETE FROM removed_chunks`
            }),
            { ...state, pruned: state.pruned + pruned }
          )
          return { state: "completed" as const, counts: counts() }
        })
    }
    return registerJobKind(kind)
  })
