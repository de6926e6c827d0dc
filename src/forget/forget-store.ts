import type { SqliteClient } from "@effect/sql-sqlite-node"
import { DateTime, Effect, Option } from "effect"
import { makeDatabaseScrub } from "../store/database-scrub.js"
import { StoreError } from "../store/store-error.js"
import { makeWriterErrors } from "../store/writer-errors.js"
import type { ImportEmbedding } from "../vectors/import-services.js"
import type { ChunkId } from "../vectors/vector-index.js"
import {
  canonicalSelector,
  type ForgetCounts,
  type ForgetSelector,
  ForgetTokenExpired,
  ForgetTokenMismatch
} from "./forget-contract.js"
import { type ForgetPlan, planForget } from "./forget-plan.js"
import type { TokenIssuer } from "./forget-token.js"

export interface ForgetStoreOptions {
  /** The daemon's writer connection. */
  readonly sql: SqliteClient.SqliteClient
  /** The database file, named in every StoreError. */
  readonly database: string
}

/** Where vectors are: the loaded model's index, and whether it lives in this SQLite file. */
export interface ForgetVectors {
  readonly embedding: Option.Option<ImportEmbedding>
  readonly embeddedVectors: boolean
}

/** Rows deleted per statement. */
const DELETE_BATCH = 500

/** What a confirmed forget removed, and the vectors still to remove from an external store. */
export interface Forgotten {
  readonly tombstoneId: number
  readonly forgottenAt: string
  readonly counts: ForgetCounts
  readonly plan: ForgetPlan
}

/**
 * Forgetting on the daemon's writer connection: plans (for previews), the one transaction that
 * removes a confirmed selection, and the scrub that follows (VACUUM and a truncating WAL
 * checkpoint), so no free page of the file or frame of its WAL keeps the forgotten text.
 */
export const makeForgetStore = ({ sql, database }: ForgetStoreOptions) => {
  const isoNow = Effect.map(DateTime.now, DateTime.formatIso)

  const { storeErrors: mapStore } = makeWriterErrors({ sql, database })
  const scrub = makeDatabaseScrub({ sql, database })

  /** The plan of a selector, read in one transaction so its parts agree. */
  const preview = (selector: ForgetSelector) =>
    mapStore("could not read what the selector matches")(sql.withTransaction(planForget(sql, selector)))

  const removeVectors = (embedding: ImportEmbedding, ids: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      if (ids.length === 0) return
      for (const key of yield* embedding.vectors.fingerprints()) {
        yield* embedding.vectors.remove(
          { ...embedding.fingerprint, key } as typeof embedding.fingerprint,
          ids as ReadonlyArray<ChunkId>
        )
      }
    }).pipe(
      Effect.mapError(
        (e) => new StoreError({ path: e.store, message: `could not remove forgotten vectors: ${e.message}` })
      )
    )

  /**
   * Recomputes the plan inside one write transaction, checks the token against it (a wrong,
   * expired or stale token fails and the transaction removes nothing), then deletes: chunks (their
   * FTS entries by trigger), their vectors when this file holds them (same transaction), messages
   * (note rows cascade), sessions left empty, capture rows; and records the tombstone, the
   * forgotten note ids and the transcript spans. A kill at any point leaves all of it or none.
   */
  const forget = (selector: ForgetSelector, token: string, issuer: TokenIssuer, vectors: ForgetVectors) =>
    mapStore("could not forget")(
      sql.withTransaction(
        Effect.gen(function* () {
          const plan = yield* planForget(sql, selector)
          const canonical = canonicalSelector(selector)
          const now = yield* DateTime.now
          const checked = issuer.check(token, canonical, plan.digest, DateTime.toEpochMillis(now))
          if (checked._tag === "Mismatch") return yield* ForgetTokenMismatch.because(checked.reason)
          if (checked._tag === "Expired") {
            return yield* ForgetTokenExpired.issuedAt(DateTime.formatIso(DateTime.unsafeMake(checked.issuedAtMs)))
          }
          const forgottenAt = DateTime.formatIso(now)
          const [tombstone] = yield* sql<{ id: number }>`
            INSERT INTO forget_tombstones (selector, counts, forgotten_at)
            VALUES (${canonical}, ${JSON.stringify(plan.counts)}, ${forgottenAt}) RETURNING id`
          const tombstoneId = tombstone?.id ?? 0
          const ids = plan.messageIds
          for (let i = 0; i < ids.length; i += DELETE_BATCH) {
            yield* sql`DELETE FROM chunks WHERE message_id IN ${sql.in(ids.slice(i, i + DELETE_BATCH))}`
          }
          if (Option.isSome(vectors.embedding) && vectors.embeddedVectors) {
            // The vectors are in this file: its rows go in this transaction, so nothing prunes them later.
            yield* removeVectors(vectors.embedding.value, plan.vectorChunkIds)
            for (let i = 0; i < plan.vectorChunkIds.length; i += DELETE_BATCH) {
              yield* sql`DELETE FROM removed_chunks WHERE chunk_id IN ${sql.in(plan.vectorChunkIds.slice(i, i + DELETE_BATCH))}`
            }
          }
          for (let i = 0; i < ids.length; i += DELETE_BATCH) {
            yield* sql`DELETE FROM messages WHERE id IN ${sql.in(ids.slice(i, i + DELETE_BATCH))}`
          }
          for (const noteId of plan.noteIds) {
            yield* sql`INSERT OR IGNORE INTO forgotten_notes (note_id, tombstone_id) VALUES (${noteId}, ${tombstoneId})`
          }
          for (const span of plan.spans) {
            yield* sql`INSERT INTO forgotten_spans ${sql.insert({ ...span, tombstone_id: tombstoneId })}`
          }
          for (let i = 0; i < plan.sessionIds.length; i += DELETE_BATCH) {
            yield* sql`DELETE FROM sessions WHERE id IN ${sql.in(plan.sessionIds.slice(i, i + DELETE_BATCH))}`
          }
          for (const id of plan.contextSessionIds) yield* sql`DELETE FROM context_sessions WHERE id = ${id}`
          for (let i = 0; i < plan.bindingKeys.length; i += DELETE_BATCH) {
            yield* sql`DELETE FROM capture_bindings WHERE binding_key IN ${sql.in(plan.bindingKeys.slice(i, i + DELETE_BATCH))}`
          }
          for (let i = 0; i < plan.eventIds.length; i += DELETE_BATCH) {
            yield* sql`DELETE FROM capture_events WHERE id IN ${sql.in(plan.eventIds.slice(i, i + DELETE_BATCH))}`
          }
          return { tombstoneId, forgottenAt, counts: plan.counts, plan } satisfies Forgotten
        })
      )
    )

  /**
   * After the commit, vectors in a store outside this file (Qdrant). Their chunks' rows in
   * `removed_chunks` stay until this succeeds, so a crash before it leaves them for repair to prune.
   */
  const removeExternalVectors = (forgotten: Forgotten, vectors: ForgetVectors) =>
    Effect.gen(function* () {
      if (Option.isNone(vectors.embedding) || vectors.embeddedVectors) return
      const ids = forgotten.plan.vectorChunkIds
      yield* removeVectors(vectors.embedding.value, ids)
      yield* mapStore("could not record the removed vectors")(
        sql.withTransaction(
          Effect.gen(function* () {
            for (let i = 0; i < ids.length; i += DELETE_BATCH) {
              yield* sql`DELETE FROM removed_chunks WHERE chunk_id IN ${sql.in(ids.slice(i, i + DELETE_BATCH))}`
            }
          })
        )
      )
    })

  /**
   * Scrubs the file after forgets not yet scrubbed (`makeDatabaseScrub`): the FTS index rebuilt,
   * `VACUUM` and a truncating checkpoint. Returns whether there was anything to scrub and it completed.
   */
  const scrubPending = mapStore("could not scrub the database after forgetting")(
    Effect.gen(function* () {
      const pending = yield* sql<{ id: number }>`SELECT id FROM forget_tombstones WHERE scrubbed_at IS NULL`
      if (pending.length === 0) return false
      yield* scrub.compact
      const at = yield* isoNow
      yield* sql`UPDATE forget_tombstones SET scrubbed_at = ${at} WHERE id IN ${sql.in(pending.map((p) => p.id))}`
      // The update is in the WAL now (a tombstone's row, no content): checkpoint it too.
      yield* scrub.checkpoint
      return true
    })
  )

  return { preview, forget, removeExternalVectors, scrubPending } as const
}

export type ForgetStore = ReturnType<typeof makeForgetStore>
