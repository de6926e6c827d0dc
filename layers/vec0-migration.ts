import type { SqlError } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Schema } from "effect"
import { getLoadablePath } from "sqlite-vec"
import type { ModelFingerprint } from "../src/embedding/fingerprint.js"
import { countOf, rowsOf } from "../src/sql/sql-rows.js"
import type { ChunkId, VectorPoint } from "../src/vectors/vector-index.js"

/** Where blctx 0.1 kept vectors: sqlite-vec `vec0` tables listed in this registry. */
const LEGACY_REGISTRY = "vec_collections"
const PAGE = 2048

const QueryOnly = Schema.Struct({ query_only: Schema.Number })
const queryOnly = rowsOf(QueryOnly)
const legacyTables = rowsOf(
  Schema.Struct({ fingerprint: Schema.String, table_name: Schema.String, dims: Schema.Number, label: Schema.String })
)
const legacyVectors = rowsOf(Schema.Struct({ id: Schema.Number, embedding: Schema.Uint8ArrayFromSelf }))

/**
 * Moves the vectors of blctx 0.1's sqlite-vec tables into the plain vector tables, then drops
 * the old tables, in one transaction: a crash leaves either the old tables or the new rows. Only
 * a writable connection can (a read-only one finds nothing to search until the writer has moved
 * them); sqlite-vec is loaded only when there is something to move.
 */
export const migrateVec0Collections = <E>(
  sql: SqliteClient.SqliteClient,
  write: (
    fingerprint: Pick<ModelFingerprint, "key" | "dims" | "label">,
    points: ReadonlyArray<VectorPoint>
  ) => Effect.Effect<void, E>
): Effect.Effect<void, E | SqlError.SqlError> =>
  Effect.gen(function* () {
    const legacy = yield* countOf(sql`SELECT count(*) AS n FROM sqlite_master WHERE name = ${LEGACY_REGISTRY}`)
    if (legacy === 0) return
    const writable = yield* queryOnly(sql`PRAGMA query_only`)
    if (sql.config.readonly === true || writable[0]?.query_only === 1) return
    yield* sql.loadExtension(getLoadablePath())
    const move = Effect.gen(function* () {
      const tables = yield* legacyTables(sql`
        SELECT fingerprint, table_name, dims, label FROM ${sql(LEGACY_REGISTRY)}`)
      for (const t of tables) {
        const fingerprint = { key: t.fingerprint, dims: t.dims, label: t.label }
        let after = -1
        for (;;) {
          const rows = yield* legacyVectors(sql`
            SELECT rowid AS id, embedding FROM ${sql(t.table_name)} WHERE rowid > ${after} ORDER BY rowid LIMIT ${PAGE}`)
          if (rows.length === 0) break
          yield* write(
            fingerprint,
            rows.map((r) => ({
              id: r.id as ChunkId,
              vector: new Float32Array(
                r.embedding.buffer.slice(
                  r.embedding.byteOffset,
                  r.embedding.byteOffset + r.embedding.byteLength
                ) as ArrayBuffer
              )
            }))
          )
          after = rows[rows.length - 1]?.id ?? after
        }
        yield* sql.unsafe(`DROP TABLE ${t.table_name}`)
      }
      yield* sql.unsafe(`DROP TABLE ${LEGACY_REGISTRY}`)
    })
    yield* sql.withTransaction(move)
  })
