import type { SqlError } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Option, Schema } from "effect"
import type { ModelFingerprint } from "../src/embedding/fingerprint.js"
import { ChunkIdRow, countOf, firstRowOf, rowsOf } from "../src/sql/sql-rows.js"
import { CompactMatrix, quantize } from "../src/vectors/compact-matrix.js"
import {
  type ChunkId,
  checkDims,
  latestPoints,
  type VectorHit,
  VectorIndex,
  VectorIndexError,
  type VectorPoint
} from "../src/vectors/vector-index.js"
import { migrateVec0Collections } from "./vec0-migration.js"

/** The registry of vector tables: one table per fingerprint, with its change counters. */
export const COLLECTIONS_TABLE = "vector_collections"
export const vectorTableName = (fingerprint: Pick<ModelFingerprint, "key">) => `vectors_${fingerprint.key}`

const BATCH = 256
/** Rows read at a time when a connection loads a whole matrix. */
const LOAD_PAGE = 4096

/**
 * How many compact-vector candidates are rescored exactly for a top-`k`: twice `k`, and at
 * least 32 more, so a neighbour the int8 pass ranks a little low still reaches the exact pass.
 */
export const rescoredFor = (k: number) => k + Math.max(k, 32)

const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

const blob = (v: Float32Array | Int8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)
const floats = (b: Uint8Array) =>
  new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer)
const codesOf = (b: Uint8Array) => new Int8Array(b.buffer, b.byteOffset, b.byteLength)

const collectionRow = firstRowOf(Schema.Struct({ dims: Schema.Number, seq: Schema.Number, pruned: Schema.Number }))
const SeqRow = Schema.Struct({ seq: Schema.Number })
const seqRow = firstRowOf(SeqRow)
const chunkIdRows = rowsOf(ChunkIdRow)
const embeddingRows = rowsOf(Schema.Struct({ chunk_id: Schema.Number, embedding: Schema.Uint8ArrayFromSelf }))
const fingerprintRows = rowsOf(Schema.Struct({ fingerprint: Schema.String }))

/** A page of a matrix's rows: read unchecked, see `currentMatrix`. */
interface CodeRow {
  readonly chunk_id: number
  readonly seq: number
  readonly scale: number
  readonly codes: Uint8Array
}

/** A connection's in-memory compact matrix of one collection, and the seq it is current to. */
interface CachedMatrix {
  readonly matrix: CompactMatrix
  seq: number
}

/**
 * Removal records kept per collection: beyond this many, the older half is dropped and a matrix
 * older than the drop is rebuilt instead of updated.
 */
export const REMOVAL_RECORDS = 50_000

/**
 * Vectors in plain tables of the daemon's SQLite file, beside the chunk rows, so an importer
 * writes chunks and vectors in one transaction. Each row keeps the float32 vector (the truth,
 * used for exact scores) and its int8 code (a quarter of the size). A search scans every code
 * of an in-memory matrix (WebAssembly SIMD), then rescores the best candidates with their exact
 * vectors, read by primary key. Each connection keeps its matrix current with the collection's
 * `seq`, which every write increments: rows carry the seq that wrote them and removals leave a
 * record `(chunk_id, seq)`, so a search reads only what changed since its matrix's seq.
 */
export const makeSqliteVectorIndex = Effect.fn("SqliteVectorIndex.make")(function* (
  sql: SqliteClient.SqliteClient,
  options: { readonly removalRecords?: number } = {}
) {
  const removalRecords = options.removalRecords ?? REMOVAL_RECORDS
  const store = sql.config.filename
  const failed =
    (what: string) =>
    (error: SqlError.SqlError | VectorIndexError): VectorIndexError =>
      error._tag === "VectorIndexError"
        ? error
        : new VectorIndexError({
            store,
            message: `${what}: ${error.cause instanceof Error ? error.cause.message : error.message}`,
            remediation: `Check that ${store} is a blctx database on a writable disk; run blctx doctor.`
          })

  const matrices = new Map<string, CachedMatrix>()

  // Nothing about the schema is cached: a table created inside a caller's transaction
  // disappears with its rollback.
  const exists = (table: string) =>
    countOf(sql`SELECT count(*) AS n FROM sqlite_master WHERE name = ${table}`).pipe(
      Effect.map((n) => n > 0),
      Effect.mapError(failed("could not read the schema"))
    )

  const ensure = (fingerprint: Pick<ModelFingerprint, "key" | "dims" | "label">) =>
    Effect.gen(function* () {
      const table = vectorTableName(fingerprint)
      yield* sql.unsafe(
        `CREATE TABLE IF NOT EXISTS ${COLLECTIONS_TABLE} (fingerprint TEXT PRIMARY KEY NOT NULL, table_name TEXT NOT NULL, dims INTEGER NOT NULL, label TEXT NOT NULL, seq INTEGER NOT NULL DEFAULT 0, pruned INTEGER NOT NULL DEFAULT 0) STRICT`
      )
      yield* sql.unsafe(
        `CREATE TABLE IF NOT EXISTS ${table} (chunk_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, scale REAL NOT NULL, codes BLOB NOT NULL, embedding BLOB NOT NULL) STRICT`
      )
      yield* sql.unsafe(`CREATE INDEX IF NOT EXISTS ${table}_seq ON ${table} (seq)`)
      yield* sql.unsafe(
        `CREATE TABLE IF NOT EXISTS ${table}_removed (chunk_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL) STRICT`
      )
      yield* sql.unsafe(`CREATE INDEX IF NOT EXISTS ${table}_removed_seq ON ${table}_removed (seq)`)
      yield* sql`INSERT INTO ${sql(COLLECTIONS_TABLE)} (fingerprint, table_name, dims, label)
                 VALUES (${fingerprint.key}, ${table}, ${fingerprint.dims}, ${fingerprint.label})
                 ON CONFLICT (fingerprint) DO NOTHING`
      return table
    })

  /** The collection's next seq, taken inside the caller's transaction. */
  const nextSeq = (key: string) =>
    seqRow(sql`UPDATE ${sql(COLLECTIONS_TABLE)} SET seq = seq + 1 WHERE fingerprint = ${key} RETURNING seq`).pipe(
      Effect.map((row) => Option.match(row, { onNone: () => 1, onSome: (r) => r.seq }))
    )

  /** Writes points (already checked) in the caller's transaction, under one new seq. */
  const write = (fingerprint: Pick<ModelFingerprint, "key" | "dims" | "label">, points: ReadonlyArray<VectorPoint>) =>
    Effect.gen(function* () {
      const table = yield* ensure(fingerprint)
      const seq = yield* nextSeq(fingerprint.key)
      for (const batch of chunksOf(points, BATCH)) {
        const rows = batch.map((p) => {
          const code = quantize(p.vector)
          return { chunk_id: p.id, seq, scale: code.scale, codes: blob(code.codes), embedding: blob(p.vector) }
        })
        yield* sql`INSERT INTO ${sql(table)} ${sql.insert(rows)}
                   ON CONFLICT (chunk_id) DO UPDATE SET seq = excluded.seq, scale = excluded.scale,
                   codes = excluded.codes, embedding = excluded.embedding`
      }
    }).pipe(Effect.mapError(failed("could not write vectors")))

  yield* migrateVec0Collections(sql, write).pipe(Effect.mapError(failed("could not migrate the sqlite-vec tables")))

  const upsert = Effect.fn("SqliteVectorIndex.upsert")(function* (
    fingerprint: ModelFingerprint,
    points: ReadonlyArray<VectorPoint>
  ) {
    const latest = yield* latestPoints(store, fingerprint, points)
    if (latest.length === 0) return
    // This connection's own matrix is rebuilt after its own writes: a rolled-back write may reuse
    // the seq a search inside it already read.
    matrices.delete(fingerprint.key)
    // Nested in a caller's transaction, this is a savepoint.
    yield* write(fingerprint, latest).pipe(sql.withTransaction, Effect.mapError(failed("could not write vectors")))
  })

  /** Keeps the newest removal records; a matrix older than the ones dropped is rebuilt. */
  const pruneRemovals = (table: string, key: string) =>
    Effect.gen(function* () {
      const kept = yield* countOf(sql`SELECT count(*) AS n FROM ${sql(`${table}_removed`)}`)
      if (kept <= removalRecords) return
      const cut = yield* seqRow(sql`SELECT seq FROM ${sql(`${table}_removed`)}
                                    ORDER BY seq DESC LIMIT 1 OFFSET ${Math.floor(removalRecords / 2)}`)
      if (Option.isNone(cut)) return
      yield* sql`DELETE FROM ${sql(`${table}_removed`)} WHERE seq <= ${cut.value.seq}`
      yield* sql`UPDATE ${sql(COLLECTIONS_TABLE)} SET pruned = ${cut.value.seq} WHERE fingerprint = ${key}`
    })

  const remove = Effect.fn("SqliteVectorIndex.remove")(function* (
    fingerprint: ModelFingerprint,
    ids: ReadonlyArray<ChunkId>
  ) {
    const table = vectorTableName(fingerprint)
    if (ids.length === 0 || !(yield* exists(table))) return
    matrices.delete(fingerprint.key)
    const removeAll = Effect.gen(function* () {
      let seq: number | undefined
      for (const batch of chunksOf(ids, 500)) {
        const gone = yield* chunkIdRows(sql`DELETE FROM ${sql(table)}
                      WHERE ${sql.in("chunk_id", batch)} RETURNING chunk_id`)
        if (gone.length === 0) continue
        seq ??= yield* nextSeq(fingerprint.key)
        const records = gone.map((g) => ({ chunk_id: g.chunk_id, seq }))
        yield* sql`INSERT INTO ${sql(`${table}_removed`)} ${sql.insert(records)}
                   ON CONFLICT (chunk_id) DO UPDATE SET seq = excluded.seq`
      }
      if (seq !== undefined) yield* pruneRemovals(table, fingerprint.key)
    })
    yield* removeAll.pipe(sql.withTransaction, Effect.mapError(failed("could not delete vectors")))
  })

  /**
   * This connection's matrix of the collection, brought up to date in one read transaction, so
   * the counters, the new rows and the removal records are of the same moment.
   */
  const currentMatrix = (fingerprint: Pick<ModelFingerprint, "key">) =>
    Effect.gen(function* () {
      const table = vectorTableName(fingerprint)
      const collection = yield* collectionRow(
        sql`SELECT dims, seq, pruned FROM ${sql(COLLECTIONS_TABLE)} WHERE fingerprint = ${fingerprint.key}`
      )
      if (Option.isNone(collection)) return undefined
      const row = collection.value
      let cached = matrices.get(fingerprint.key)
      // Too old for the removal records kept, newer than the file (restored, or a rolled-back
      // write), or other dims: start over.
      if (cached === undefined || cached.seq < row.pruned || cached.seq > row.seq || cached.matrix.dims !== row.dims) {
        cached = { matrix: new CompactMatrix(row.dims), seq: -1 }
        matrices.set(fingerprint.key, cached)
      }
      if (row.seq > cached.seq) {
        const since = cached.seq
        const matrix = cached.matrix
        if (since < 0) {
          // A whole load, a page at a time, so the rows read never outweigh the matrix.
          let after = -1
          for (;;) {
            // Unchecked: a whole load reads every row (100k at 100k chunks), and decoding them
            // measured about 110 ms on top of a load of about a second.
            const page = yield* sql<Omit<CodeRow, "seq">>`
              SELECT chunk_id, scale, codes FROM ${sql(table)} WHERE chunk_id > ${after}
              ORDER BY chunk_id LIMIT ${LOAD_PAGE}`
            for (const r of page) matrix.set(r.chunk_id, { codes: codesOf(r.codes), scale: r.scale })
            if (page.length < LOAD_PAGE) break
            after = page[page.length - 1]?.chunk_id ?? after
          }
          cached.seq = row.seq
          return matrix
        }
        // Removals first, then the rows written since: in this snapshot a row is present exactly
        // when its last write came after any removal of it, so a chunk removed and written again
        // is present, written and removed is not. The rows come a page at a time in (seq, id)
        // order: a large import adds hundreds of thousands, which must not all be held at once.
        const removed = yield* chunkIdRows(sql`
          SELECT chunk_id FROM ${sql(`${table}_removed`)} WHERE seq > ${since}`)
        for (const r of removed) matrix.delete(r.chunk_id)
        let after = { seq: since, id: Number.MAX_SAFE_INTEGER }
        for (;;) {
          // Unchecked, as a whole load: after a large import this reads every row written since.
          const page = yield* sql<CodeRow>`
            SELECT chunk_id, seq, scale, codes FROM ${sql(table)}
            WHERE (seq, chunk_id) > (${after.seq}, ${after.id})
            ORDER BY seq, chunk_id LIMIT ${LOAD_PAGE}`
          for (const r of page) matrix.set(r.chunk_id, { codes: codesOf(r.codes), scale: r.scale })
          const last = page[page.length - 1]
          if (page.length < LOAD_PAGE || last === undefined) break
          after = { seq: last.seq, id: last.chunk_id }
        }
        cached.seq = row.seq
      }
      return cached.matrix
    }).pipe(sql.withTransaction)

  const search = Effect.fn("SqliteVectorIndex.search")(function* (
    fingerprint: ModelFingerprint,
    query: Float32Array,
    k: number
  ) {
    const bad = checkDims(store, fingerprint, query)
    if (bad !== undefined) return yield* bad
    if (k <= 0) return []
    if (!(yield* exists(COLLECTIONS_TABLE)) || !(yield* exists(vectorTableName(fingerprint)))) return []
    const wanted = Math.floor(k)
    return yield* Effect.gen(function* () {
      const matrix = yield* currentMatrix(fingerprint)
      if (matrix === undefined) return []
      const candidates = matrix.candidates(query, rescoredFor(wanted))
      const hits: Array<VectorHit> = []
      const norm = Math.sqrt(dot(query, query))
      for (const batch of chunksOf(candidates, 500)) {
        const rows = yield* embeddingRows(sql`
          SELECT chunk_id, embedding FROM ${sql(vectorTableName(fingerprint))} WHERE ${sql.in("chunk_id", batch)}`)
        for (const r of rows) {
          const v = floats(r.embedding)
          const length = Math.sqrt(dot(v, v))
          hits.push({
            id: r.chunk_id as ChunkId,
            score: norm === 0 || length === 0 ? 0 : dot(query, v) / (norm * length)
          })
        }
      }
      return hits.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, wanted)
    }).pipe(Effect.mapError(failed("could not search vectors")))
  })

  const count = Effect.fn("SqliteVectorIndex.count")(function* (fingerprint: ModelFingerprint) {
    const table = vectorTableName(fingerprint)
    if (!(yield* exists(table))) return 0
    return yield* countOf(sql`SELECT count(*) AS n FROM ${sql(table)}`).pipe(
      Effect.mapError(failed("could not count vectors"))
    )
  })

  const listIds = Effect.fn("SqliteVectorIndex.listIds")(function* (fingerprint: ModelFingerprint) {
    const table = vectorTableName(fingerprint)
    if (!(yield* exists(table))) return []
    const rows = yield* chunkIdRows(sql`SELECT chunk_id FROM ${sql(table)} ORDER BY chunk_id`).pipe(
      Effect.mapError(failed("could not list vectors"))
    )
    return rows.map((r) => r.chunk_id as ChunkId)
  })

  const fingerprints = Effect.fn("SqliteVectorIndex.fingerprints")(function* () {
    if (!(yield* exists(COLLECTIONS_TABLE))) return []
    const rows = yield* fingerprintRows(
      sql`SELECT fingerprint FROM ${sql(COLLECTIONS_TABLE)} ORDER BY fingerprint`
    ).pipe(Effect.mapError(failed("could not list vector tables")))
    return rows.map((r) => r.fingerprint)
  })

  /**
   * Brings every collection's matrix up to date now, so a search does not pay for it: the first
   * search of a new query worker (about a second at 100k chunks), or the first after a large
   * import (every row written since). Says how many vectors each matrix holds.
   */
  const warm = Effect.gen(function* () {
    const held: Array<{ readonly fingerprint: string; readonly vectors: number }> = []
    for (const key of yield* fingerprints()) {
      const matrix = yield* currentMatrix({ key }).pipe(Effect.mapError(failed("could not load the vectors")))
      held.push({ fingerprint: key, vectors: matrix?.size ?? 0 })
    }
    return held
  })

  return Object.assign(VectorIndex.of({ upsert, remove, search, count, listIds, fingerprints }), { warm })
})

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0)
  return sum
}
