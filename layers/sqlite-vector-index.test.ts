import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Reactivity } from "@effect/experimental"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { getLoadablePath } from "sqlite-vec"
import { seededRandom } from "../bench/seeded-random.js"
import { DEFAULT_MODEL_SPEC, ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { cosine } from "../src/embedding/pooling.js"
import { ChunkId } from "../src/vectors/vector-index.js"
import { makeSqliteVectorIndex, rescoredFor } from "./sqlite-vector-index.js"

const id = (n: number) => ChunkId.make(n)
const fp384 = fingerprintOf(DEFAULT_MODEL_SPEC)
const fp4 = fingerprintOf(new ModelSpec({ ...DEFAULT_MODEL_SPEC, repo: "blctx-test/four", dims: 4 }))
const unit = (...xs: Array<number>) => Float32Array.from(xs)

const sqliteFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "blctx-vectors-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => NodePath.join(dir, "context.db")))
const open = (filename: string, readonly = false) =>
  SqliteClient.make(readonly ? { filename, readonly, disableWAL: true } : { filename }).pipe(
    Effect.provide(Reactivity.layer)
  )

/**
 * Text-like vectors: the normalised sum of a few "term" vectors drawn with a Zipf-like skew,
 * so neighbours share terms, as embeddings of texts that share words do.
 */
const termVectors = (seed: number, terms: number, dims: number) => {
  const next = seededRandom(seed)
  const table = Array.from({ length: terms }, () => Float32Array.from({ length: dims }, () => next() * 2 - 1))
  return (count: number) => {
    const v = new Float32Array(dims)
    for (let t = 0; t < count; t++) {
      const term = table[Math.floor(terms * next() ** 3)] ?? table[0]
      for (let i = 0; i < dims; i++) v[i] = (v[i] ?? 0) + (term?.[i] ?? 0)
    }
    return v
  }
}

describe("SQLite vector index: each connection's compact matrix", () => {
  it.scoped("a reader sees vectors written, replaced and removed by the writer after its first search", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      const writer = yield* makeSqliteVectorIndex(yield* open(file))
      yield* writer.upsert(fp4, [
        { id: id(1), vector: unit(1, 0, 0, 0) },
        { id: id(2), vector: unit(0, 1, 0, 0) }
      ])
      const reader = yield* makeSqliteVectorIndex(yield* open(file, true))
      yield* reader.warm
      expect((yield* reader.search(fp4, unit(1, 0, 0, 0), 1)).map((h) => h.id)).toEqual([1])
      // Added and replaced: read incrementally (rows newer than the matrix).
      yield* writer.upsert(fp4, [
        { id: id(3), vector: unit(0.9, 0.1, 0, 0) },
        { id: id(1), vector: unit(0, 0, 1, 0) }
      ])
      expect((yield* reader.search(fp4, unit(1, 0.5, 0, 0), 2)).map((h) => h.id)).toEqual([3, 2])
      expect((yield* reader.search(fp4, unit(0, 0, 1, 0), 1)).map((h) => h.id)).toEqual([1])
      // Removed: the matrix is rebuilt, and a removed chunk is never a hit.
      yield* writer.remove(fp4, [id(3)])
      expect((yield* reader.search(fp4, unit(1, 0.5, 0, 0), 3)).map((h) => h.id)).toEqual([2, 1])
      // A removal of ids that are not there changes nothing.
      yield* writer.remove(fp4, [id(99)])
      expect(yield* reader.count(fp4)).toBe(2)
    })
  )

  it.scoped("warm brings a reader's matrices up to date without a search, and says what each holds", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      const writer = yield* makeSqliteVectorIndex(yield* open(file))
      const reader = yield* makeSqliteVectorIndex(yield* open(file, true))
      expect(yield* reader.warm).toEqual([])
      yield* writer.upsert(fp4, [
        { id: id(1), vector: unit(1, 0, 0, 0) },
        { id: id(2), vector: unit(0, 1, 0, 0) }
      ])
      expect(yield* reader.warm).toEqual([{ fingerprint: fp4.key, vectors: 2 }])
      // Written since: added to the matrix in place; a rewrite is not a second vector.
      yield* writer.upsert(fp4, [
        { id: id(3), vector: unit(0, 0, 1, 0) },
        { id: id(1), vector: unit(0, 0, 0, 1) }
      ])
      yield* writer.upsert(fp384, [{ id: id(9), vector: new Float32Array(384).fill(0.5) }])
      yield* writer.remove(fp4, [id(2)])
      const held = yield* reader.warm
      expect([...held].sort((a, b) => a.fingerprint.localeCompare(b.fingerprint))).toEqual(
        [
          { fingerprint: fp4.key, vectors: 2 },
          { fingerprint: fp384.key, vectors: 1 }
        ].sort((a, b) => a.fingerprint.localeCompare(b.fingerprint))
      )
      // What the warmed matrix holds is what a search finds.
      expect((yield* reader.search(fp4, unit(0, 0, 0, 1), 3)).map((h) => h.id)).toEqual([1, 3])
    })
  )

  it.scoped("a reader follows many removals incrementally, and rebuilds once the records it needs are pruned", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      const writer = yield* makeSqliteVectorIndex(yield* open(file), { removalRecords: 4 })
      const points = Array.from({ length: 12 }, (_, i) => ({ id: id(i + 1), vector: unit(1, i / 12, 0, 0) }))
      yield* writer.upsert(fp4, points)
      const reader = yield* makeSqliteVectorIndex(yield* open(file, true))
      const ids = () =>
        reader.search(fp4, unit(1, 0, 0, 0), 20).pipe(Effect.map((hits) => hits.map((h) => h.id).sort((a, b) => a - b)))
      expect(yield* ids()).toHaveLength(12)
      // Two removals: their records are kept, the reader applies them.
      yield* writer.remove(fp4, [id(1), id(2)])
      expect(yield* ids()).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
      // Removed and written again: present.
      yield* writer.remove(fp4, [id(3)])
      yield* writer.upsert(fp4, [{ id: id(3), vector: unit(0, 1, 0, 0) }])
      expect(yield* ids()).toContain(3)
      // Past four records the older ones are dropped: a reader that missed them rebuilds.
      yield* writer.remove(fp4, [id(4), id(5), id(6), id(7)])
      expect(yield* ids()).toEqual([3, 8, 9, 10, 11, 12])
      const sql = yield* open(file, true)
      const [records] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(`vectors_${fp4.key}_removed`)}`
      expect(records?.n).toBeLessThanOrEqual(4)
    })
  )

  it.scoped("a reader catches up on more new rows than it reads at a time, removals and rewrites included", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      const writer = yield* makeSqliteVectorIndex(yield* open(file))
      const at = (n: number) => unit(1, (n % 97) / 97, (n % 13) / 13, 0)
      yield* writer.upsert(fp4, [{ id: id(1), vector: at(1) }])
      const reader = yield* makeSqliteVectorIndex(yield* open(file, true))
      const present = () =>
        reader
          .search(fp4, unit(1, 0, 0, 0), 100_000)
          .pipe(Effect.map((hits) => hits.map((h) => h.id as number).sort((a, b) => a - b)))
      expect(yield* present()).toEqual([1])
      // After the reader's matrix: 9,000 rows in two writes (more than two pages of 4,096, a
      // page boundary inside each write), a chunk removed then written again, one written then removed.
      yield* writer.upsert(
        fp4,
        Array.from({ length: 5000 }, (_, i) => ({ id: id(i + 2), vector: at(i + 2) }))
      )
      yield* writer.remove(fp4, [id(1), id(2), id(5001)])
      yield* writer.upsert(
        fp4,
        [5001, ...Array.from({ length: 4000 }, (_, i) => i + 6000)].map((n) => ({ id: id(n), vector: at(n) }))
      )
      yield* writer.remove(fp4, [id(9999)])
      const expected = [
        ...Array.from({ length: 4999 }, (_, i) => i + 3),
        ...Array.from({ length: 4000 }, (_, i) => i + 6000).filter((n) => n !== 9999)
      ].sort((a, b) => a - b)
      expect(yield* present()).toEqual(expected)
      // The vector of a row read on the last page is the one written.
      const [best] = yield* reader.search(fp4, at(9998), 1)
      expect(best?.score).toBeCloseTo(1, 5)
    })
  )

  it.scoped("a search inside a rolled-back write does not leave the rolled-back vector behind", () =>
    Effect.gen(function* () {
      const sql = yield* open(yield* sqliteFile)
      const index = yield* makeSqliteVectorIndex(sql)
      yield* index.upsert(fp4, [{ id: id(1), vector: unit(1, 0, 0, 0) }])
      const attempt = Effect.gen(function* () {
        yield* index.upsert(fp4, [{ id: id(2), vector: unit(0, 1, 0, 0) }])
        expect((yield* index.search(fp4, unit(0, 1, 0, 0), 1)).map((h) => h.id)).toEqual([2])
        return yield* Effect.fail("rolled back" as const)
      })
      expect(yield* Effect.flip(sql.withTransaction(attempt))).toBe("rolled back")
      yield* index.upsert(fp4, [{ id: id(3), vector: unit(0, 0, 1, 0) }])
      expect((yield* index.search(fp4, unit(0, 1, 0, 0), 5)).map((h) => h.id).sort()).toEqual([1, 3])
    })
  )

  it.scoped("recall@10 against exact search is at least 0.98 over 5,000 text-like 384-d vectors", () =>
    Effect.gen(function* () {
      const index = yield* makeSqliteVectorIndex(yield* open(yield* sqliteFile))
      const draw = termVectors(3, 2000, 384)
      const next = seededRandom(5)
      const points = Array.from({ length: 5000 }, (_, i) => ({
        id: id(i + 1),
        vector: draw(3 + Math.floor(next() * 60))
      }))
      yield* index.upsert(fp384, points)
      let found = 0
      const queries = 50
      for (let q = 0; q < queries; q++) {
        const query = draw(2 + Math.floor(next() * 6))
        const exact = new Set(
          points
            .map((p) => ({ id: p.id, score: cosine(query, p.vector) }))
            .sort((a, b) => b.score - a.score)
            .slice(0, 10)
            .map((p) => p.id)
        )
        for (const hit of yield* index.search(fp384, query, 10)) if (exact.has(hit.id)) found++
      }
      const recall = found / (queries * 10)
      console.log(
        `compact vectors: recall@10 ${recall.toFixed(3)} over ${queries} queries (${rescoredFor(10)} rescored)`
      )
      expect(recall).toBeGreaterThanOrEqual(0.98)
    })
  )
})

describe("SQLite vector index: blctx 0.1's sqlite-vec tables", () => {
  const legacyDatabase = (file: string) =>
    Effect.gen(function* () {
      const sql = yield* open(file)
      yield* sql.loadExtension(getLoadablePath())
      yield* sql.unsafe(
        "CREATE TABLE vec_collections (fingerprint TEXT PRIMARY KEY NOT NULL, table_name TEXT NOT NULL, dims INTEGER NOT NULL, label TEXT NOT NULL) STRICT"
      )
      yield* sql.unsafe(`CREATE VIRTUAL TABLE vec_${fp4.key} USING vec0(embedding float[4] distance_metric=cosine)`)
      yield* sql`INSERT INTO vec_collections VALUES (${fp4.key}, ${`vec_${fp4.key}`}, 4, ${fp4.label})`
      for (const [n, v] of [
        [5, unit(1, 0, 0, 0)],
        [9, unit(0, 1, 0, 0)],
        [12, unit(0, 0, 0.6, 0.8)]
      ] as const) {
        yield* sql`INSERT INTO ${sql(`vec_${fp4.key}`)} (rowid, embedding) VALUES (${BigInt(n)}, ${Buffer.from(v.buffer)})`
      }
    })

  it.scoped("are moved into the vector tables by the first writable connection, and dropped", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      yield* Effect.scoped(legacyDatabase(file))
      // A read-only connection leaves them alone and finds nothing yet.
      const early = yield* makeSqliteVectorIndex(yield* open(file, true))
      expect(yield* early.count(fp4)).toBe(0)
      const sql = yield* open(file)
      const index = yield* makeSqliteVectorIndex(sql)
      expect(yield* index.listIds(fp4)).toEqual([5, 9, 12])
      const [best] = yield* index.search(fp4, unit(0, 0, 3, 4), 1)
      expect(best?.id).toBe(12)
      expect(best?.score).toBeCloseTo(1, 5)
      const left = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE name LIKE 'vec!_%' ESCAPE '!'`
      expect(left).toEqual([])
      expect(yield* early.count(fp4)).toBe(3)
    })
  )
})
