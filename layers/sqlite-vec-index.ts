import type { SqlError } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect } from "effect"
import { getLoadablePath } from "sqlite-vec"
import type { ModelFingerprint } from "../src/embedding/fingerprint.js"
import {
  type ChunkId,
  checkDims,
  VectorIndex,
  VectorIndexError,
  type VectorPoint
} from "../src/vectors/vector-index.js"

/** The registry of vector tables: one vec0 table per fingerprint. */
export const COLLECTIONS_TABLE = "vec_collections"
export const vectorTableName = (fingerprint: ModelFingerprint) => `vec_${fingerprint.key}`

/** sqlite-vec's KNN accepts at most this many neighbours per query. */
const MAX_K = 4096
const DELETE_BATCH = 500
const WRITE_BATCH = 256

const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)

/**
 * The embedded vector index: sqlite-vec loaded into the same SQLite connection as the chunk
 * rows, so an importer can write chunks and their vectors in one transaction
 * (`sql.withTransaction`). Exact cosine KNN. Tables are created on first write, so a read-only
 * connection can search.
 */
export const makeSqliteVecIndex = Effect.fn("SqliteVecIndex.make")(function* (sql: SqliteClient.SqliteClient) {
  const store = sql.config.filename
  const failed =
    (what: string) =>
    (error: SqlError.SqlError): VectorIndexError =>
      new VectorIndexError({
        store,
        message: `${what}: ${error.cause instanceof Error ? error.cause.message : error.message}`,
        remediation: `Check that ${store} is a blctx database on a writable disk; run blctx doctor.`
      })

  yield* sql.loadExtension(getLoadablePath()).pipe(Effect.mapError(failed("could not load sqlite-vec")))

  // Nothing is cached: a table created inside a caller's transaction disappears with its rollback.
  const exists = (table: string) =>
    sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE name = ${table}`.pipe(
      Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
      Effect.mapError(failed("could not read the schema"))
    )

  const ensure = (fingerprint: ModelFingerprint) =>
    Effect.gen(function* () {
      const table = vectorTableName(fingerprint)
      yield* sql.unsafe(
        `CREATE TABLE IF NOT EXISTS ${COLLECTIONS_TABLE} (fingerprint TEXT PRIMARY KEY NOT NULL, table_name TEXT NOT NULL, dims INTEGER NOT NULL, label TEXT NOT NULL) STRICT`
      )
      yield* sql.unsafe(
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0(embedding float[${fingerprint.dims}] distance_metric=cosine)`
      )
      yield* sql`INSERT INTO ${sql(COLLECTIONS_TABLE)} (fingerprint, table_name, dims, label)
                 VALUES (${fingerprint.key}, ${table}, ${fingerprint.dims}, ${fingerprint.label})
                 ON CONFLICT (fingerprint) DO NOTHING`
      return table
    }).pipe(Effect.mapError(failed("could not create the vector table")))

  const upsert = Effect.fn("SqliteVecIndex.upsert")(function* (
    fingerprint: ModelFingerprint,
    points: ReadonlyArray<VectorPoint>
  ) {
    for (const p of points) {
      const bad = checkDims(store, fingerprint, p.vector)
      if (bad !== undefined) return yield* bad
    }
    if (points.length === 0) return
    const table = yield* ensure(fingerprint)
    // The last vector given for an id wins.
    const latest = [...new Map(points.map((p) => [p.id, p])).values()]
    // vec0 has no upsert: delete then insert, atomically, a batch per statement. Nested in a
    // caller's transaction, this is a savepoint.
    const write = Effect.forEach(
      chunksOf(latest, WRITE_BATCH),
      (batch) =>
        Effect.zipRight(
          sql`DELETE FROM ${sql(table)} WHERE ${sql.in(
            "rowid",
            batch.map((p) => BigInt(p.id))
          )}`,
          sql`INSERT INTO ${sql(table)} ${sql.insert(batch.map((p) => ({ rowid: BigInt(p.id), embedding: blob(p.vector) })))}`
        ),
      { discard: true }
    )
    yield* write.pipe(sql.withTransaction, Effect.mapError(failed("could not write vectors")))
  })

  const remove = Effect.fn("SqliteVecIndex.remove")(function* (
    fingerprint: ModelFingerprint,
    ids: ReadonlyArray<ChunkId>
  ) {
    const table = vectorTableName(fingerprint)
    if (ids.length === 0 || !(yield* exists(table))) return
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      const batch = ids.slice(i, i + DELETE_BATCH).map((id) => BigInt(id))
      yield* sql`DELETE FROM ${sql(table)} WHERE ${sql.in("rowid", batch)}`.pipe(
        Effect.mapError(failed("could not delete vectors"))
      )
    }
  })

  const search = Effect.fn("SqliteVecIndex.search")(function* (
    fingerprint: ModelFingerprint,
    query: Float32Array,
    k: number
  ) {
    const bad = checkDims(store, fingerprint, query)
    if (bad !== undefined) return yield* bad
    const table = vectorTableName(fingerprint)
    if (k <= 0 || !(yield* exists(table))) return []
    const rows = yield* sql<{ id: number; distance: number }>`
        SELECT rowid AS id, distance FROM ${sql(table)}
        WHERE embedding MATCH ${blob(query)} AND k = ${Math.min(Math.floor(k), MAX_K)}
        ORDER BY distance`.pipe(Effect.mapError(failed("could not search vectors")))
    return rows.map((r) => ({ id: r.id as ChunkId, score: 1 - r.distance }))
  })

  const count = Effect.fn("SqliteVecIndex.count")(function* (fingerprint: ModelFingerprint) {
    const table = vectorTableName(fingerprint)
    if (!(yield* exists(table))) return 0
    const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(table)}`.pipe(
      Effect.mapError(failed("could not count vectors"))
    )
    return rows[0]?.n ?? 0
  })

  const listIds = Effect.fn("SqliteVecIndex.listIds")(function* (fingerprint: ModelFingerprint) {
    const table = vectorTableName(fingerprint)
    if (!(yield* exists(table))) return []
    const rows = yield* sql<{ id: number }>`SELECT rowid AS id FROM ${sql(table)} ORDER BY rowid`.pipe(
      Effect.mapError(failed("could not list vectors"))
    )
    return rows.map((r) => r.id as ChunkId)
  })

  const fingerprints = Effect.fn("SqliteVecIndex.fingerprints")(function* () {
    if (!(yield* exists(COLLECTIONS_TABLE))) return []
    const rows = yield* sql<{
      fingerprint: string
    }>`SELECT fingerprint FROM ${sql(COLLECTIONS_TABLE)} ORDER BY fingerprint`.pipe(
      Effect.mapError(failed("could not list vector tables"))
    )
    return rows.map((r) => r.fingerprint)
  })

  return VectorIndex.of({ upsert, remove, search, count, listIds, fingerprints })
})
