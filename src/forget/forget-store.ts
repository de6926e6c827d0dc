import { type SqlClient, SqlSchema } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { DateTime, Effect, Option, Schema } from "effect"
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

const IdRow = Schema.Struct({ id: Schema.Number })

/** What a confirmed forget removed, and the vectors still to remove from an external store. */
export interface Forgotten {
  readonly tombstoneId: number
  readonly forgottenAt: string
  readonly counts: ForgetCounts
  readonly plan: ForgetPlan
}

/** Removes the chunks' vectors of every fingerprint from the loaded model's index. */
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

/** `DELETE FROM <table> WHERE <column> IN (…)` for every value, a batch per statement. */
const deleteIn = (sql: SqlClient.SqlClient, table: string, column: string, values: ReadonlyArray<string | number>) =>
  Effect.gen(function* () {
    for (let i = 0; i < values.length; i += DELETE_BATCH) {
      yield* sql`DELETE FROM ${sql(table)} WHERE ${sql(column)} IN ${sql.in(values.slice(i, i + DELETE_BATCH))}`
    }
  })

const insertTombstone = (sql: SqlClient.SqlClient) =>
  SqlSchema.single({
    Request: Schema.Struct({ selector: Schema.String, counts: Schema.String, forgotten_at: Schema.String }),
    Result: IdRow,
    execute: (row) => sql`INSERT INTO forget_tombstones ${sql.insert(row)} RETURNING id`
  })

/** The token checked against the plan recomputed now: a wrong, expired or stale one fails. */
const checkToken = (token: string, canonical: string, plan: ForgetPlan, issuer: TokenIssuer, now: DateTime.Utc) =>
  Effect.gen(function* () {
    const checked = issuer.check(token, canonical, plan.digest, DateTime.toEpochMillis(now))
    if (checked._tag === "Mismatch") return yield* ForgetTokenMismatch.because(checked.reason)
    if (checked._tag === "Expired") {
      return yield* ForgetTokenExpired.issuedAt(DateTime.formatIso(DateTime.unsafeMake(checked.issuedAtMs)))
    }
  })

/**
 * Deletes what the plan names: chunks (their FTS entries by trigger), their vectors when this
 * file holds them (same transaction), messages (note rows cascade), sessions left empty,
 * capture rows.
 */
const deletePlanned = (sql: SqlClient.SqlClient, plan: ForgetPlan, vectors: ForgetVectors) =>
  Effect.gen(function* () {
    yield* deleteIn(sql, "chunks", "message_id", plan.messageIds)
    if (Option.isSome(vectors.embedding) && vectors.embeddedVectors) {
      // The vectors are in this file: its rows go in this transaction, so nothing prunes them later.
      yield* removeVectors(vectors.embedding.value, plan.vectorChunkIds)
      yield* deleteIn(sql, "removed_chunks", "chunk_id", plan.vectorChunkIds)
    }
    yield* deleteIn(sql, "messages", "id", plan.messageIds)
    yield* deleteIn(sql, "sessions", "id", plan.sessionIds)
    for (const id of plan.contextSessionIds) yield* sql`DELETE FROM context_sessions WHERE id = ${id}`
    yield* deleteIn(sql, "capture_bindings", "binding_key", plan.bindingKeys)
    yield* deleteIn(sql, "capture_events", "id", plan.eventIds)
  })

/** The forgotten note ids and transcript spans, under the tombstone: nothing brings them back. */
const recordForgotten = (sql: SqlClient.SqlClient, plan: ForgetPlan, tombstoneId: number) =>
  Effect.gen(function* () {
    for (const noteId of plan.noteIds) {
      yield* sql`INSERT OR IGNORE INTO forgotten_notes (note_id, tombstone_id) VALUES (${noteId}, ${tombstoneId})`
    }
    for (const span of plan.spans) {
      yield* sql`INSERT INTO forgotten_spans ${sql.insert({ ...span, tombstone_id: tombstoneId })}`
    }
  })

/**
 * In the caller's write transaction: recomputes the plan, checks the token against it, records
 * the tombstone, then deletes (`deletePlanned`) and records what is forgotten (`recordForgotten`).
 */
const confirmedForget = (
  sql: SqlClient.SqlClient,
  selector: ForgetSelector,
  token: string,
  issuer: TokenIssuer,
  vectors: ForgetVectors
) =>
  Effect.gen(function* () {
    const plan = yield* planForget(sql, selector)
    const canonical = canonicalSelector(selector)
    const now = yield* DateTime.now
    yield* checkToken(token, canonical, plan, issuer, now)
    const forgottenAt = DateTime.formatIso(now)
    const tombstone = yield* insertTombstone(sql)({
      selector: canonical,
      counts: JSON.stringify(plan.counts),
      forgotten_at: forgottenAt
    }).pipe(Effect.catchTag("NoSuchElementException", () => Effect.dieMessage("tombstone row was not written")))
    yield* deletePlanned(sql, plan, vectors)
    yield* recordForgotten(sql, plan, tombstone.id)
    return { tombstoneId: tombstone.id, forgottenAt, counts: plan.counts, plan } satisfies Forgotten
  })

/** Scrubs after the tombstones not yet scrubbed, then marks them; whether there were any. */
const scrubTombstones = (sql: SqlClient.SqlClient, scrub: ReturnType<typeof makeDatabaseScrub>) =>
  Effect.gen(function* () {
    const pending = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: IdRow,
      execute: () => sql`SELECT id FROM forget_tombstones WHERE scrubbed_at IS NULL`
    })(undefined)
    if (pending.length === 0) return false
    yield* scrub.compact
    const at = DateTime.formatIso(yield* DateTime.now)
    yield* sql`UPDATE forget_tombstones SET scrubbed_at = ${at} WHERE id IN ${sql.in(pending.map((p) => p.id))}`
    // The update is in the WAL now (a tombstone's row, no content): checkpoint it too.
    yield* scrub.checkpoint
    return true
  })

/**
 * Forgetting on the daemon's writer connection: plans (for previews), the one transaction that
 * removes a confirmed selection, and the scrub that follows (VACUUM and a truncating WAL
 * checkpoint), so no free page of the file or frame of its WAL keeps the forgotten text.
 */
export const makeForgetStore = ({ sql, database }: ForgetStoreOptions) => {
  const { storeErrors: mapStore } = makeWriterErrors({ sql, database })

  /** The plan of a selector, read in one transaction so its parts agree. */
  const preview = (selector: ForgetSelector) =>
    mapStore("could not read what the selector matches")(sql.withTransaction(planForget(sql, selector)))

  /**
   * Recomputes the plan inside one write transaction, checks the token against it (a wrong,
   * expired or stale token fails and the transaction removes nothing), then records the tombstone
   * and deletes (`deletePlanned`, `recordForgotten`). A kill at any point leaves all of it or none.
   */
  const forget = (selector: ForgetSelector, token: string, issuer: TokenIssuer, vectors: ForgetVectors) =>
    mapStore("could not forget")(sql.withTransaction(confirmedForget(sql, selector, token, issuer, vectors)))

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
        sql.withTransaction(deleteIn(sql, "removed_chunks", "chunk_id", ids))
      )
    })

  /**
   * Scrubs the file after forgets not yet scrubbed (`makeDatabaseScrub`): the FTS index rebuilt,
   * `VACUUM` and a truncating checkpoint. Returns whether there was anything to scrub and it completed.
   */
  const scrubPending = mapStore("could not scrub the database after forgetting")(
    scrubTombstones(sql, makeDatabaseScrub({ sql, database }))
  )

  return { preview, forget, removeExternalVectors, scrubPending } as const
}

export type ForgetStore = ReturnType<typeof makeForgetStore>
