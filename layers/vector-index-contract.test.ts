import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Reactivity } from "@effect/experimental"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { QdrantClient } from "@qdrant/js-client-rest"
import { Effect, Layer, type Scope } from "effect"
import { seededRandom } from "../bench/seeded-random.js"
import { DEFAULT_MODEL_SPEC, ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf, ModelFingerprint } from "../src/embedding/fingerprint.js"
import { cosine } from "../src/embedding/pooling.js"
import { ChunkId, VectorIndex, type VectorIndexShape } from "../src/vectors/vector-index.js"
import { collectionName, makeQdrantIndex } from "./qdrant-vector-index.js"
import { makeSqliteVectorIndex } from "./sqlite-vector-index.js"

const randomVector = (next: () => number, dims: number) => {
  const v = new Float32Array(dims)
  for (let i = 0; i < dims; i++) v[i] = next() * 2 - 1
  return v
}
const id = (n: number) => ChunkId.make(n)
const fp384 = fingerprintOf(DEFAULT_MODEL_SPEC)
const fp4 = fingerprintOf(new ModelSpec({ ...DEFAULT_MODEL_SPEC, repo: "blctx-test/four", dims: 4 }))
const unit = (...xs: Array<number>) => Float32Array.from(xs)

type Maker = () => Effect.Effect<VectorIndexShape, unknown, Scope.Scope>

/** The behaviour every VectorIndex layer must have. `enabled` false skips (the named opt-ins). */
const contract = (name: string, enabled: boolean, make: Maker) =>
  describe(`VectorIndex contract: ${name}`, () => {
    const test = (title: string, body: (index: VectorIndexShape) => Effect.Effect<void, unknown>) =>
      it.scoped.runIf(enabled)(title, () => Effect.flatMap(make(), body))

    test("an unknown fingerprint is empty: no ids, count 0, no hits", (index) =>
      Effect.gen(function* () {
        expect(yield* index.count(fp4)).toBe(0)
        expect(yield* index.listIds(fp4)).toEqual([])
        expect(yield* index.search(fp4, unit(1, 0, 0, 0), 3)).toEqual([])
        yield* index.remove(fp4, [id(1)])
      }))

    test("upserts by chunk id: a second upsert of an id replaces its vector", (index) =>
      Effect.gen(function* () {
        yield* index.upsert(fp4, [
          { id: id(1), vector: unit(1, 0, 0, 0) },
          { id: id(2), vector: unit(0, 1, 0, 0) },
          { id: id(3), vector: unit(0, 0, 1, 0) }
        ])
        expect(yield* index.count(fp4)).toBe(3)
        yield* index.upsert(fp4, [{ id: id(1), vector: unit(0, 0, 0, 1) }])
        expect(yield* index.count(fp4)).toBe(3)
        expect(yield* index.listIds(fp4)).toEqual([1, 2, 3])
        const [best] = yield* index.search(fp4, unit(0, 0, 0, 1), 1)
        expect(best?.id).toBe(1)
        expect(best?.score).toBeCloseTo(1, 5)
      }))

    test("keeps the last vector when one upsert names an id twice", (index) =>
      Effect.gen(function* () {
        yield* index.upsert(fp4, [
          { id: id(5), vector: unit(1, 0, 0, 0) },
          { id: id(6), vector: unit(0, 1, 0, 0) },
          { id: id(5), vector: unit(0, 0, 1, 0) }
        ])
        expect(yield* index.listIds(fp4)).toEqual([5, 6])
        const [best] = yield* index.search(fp4, unit(0, 0, 1, 0), 1)
        expect(best?.id).toBe(5)
        expect(best?.score).toBeCloseTo(1, 5)
      }))

    test("searches top-k by cosine similarity, best first, scale-invariant", (index) =>
      Effect.gen(function* () {
        yield* index.upsert(fp4, [
          { id: id(10), vector: unit(1, 0, 0, 0) },
          { id: id(11), vector: unit(1, 1, 0, 0) },
          { id: id(12), vector: unit(0, 1, 0, 0) },
          { id: id(13), vector: unit(-1, 0, 0, 0) }
        ])
        const hits = yield* index.search(fp4, unit(5, 1, 0, 0), 3)
        expect(hits.map((h) => h.id)).toEqual([10, 11, 12])
        expect(hits[0]?.score).toBeCloseTo(5 / Math.sqrt(26), 5)
        expect(hits[1]?.score).toBeCloseTo(6 / Math.sqrt(52), 5)
        expect((yield* index.search(fp4, unit(1, 0, 0, 0), 100)).map((h) => h.id)).toEqual([10, 11, 12, 13])
      }))

    test("removes by chunk id and ignores ids it does not have", (index) =>
      Effect.gen(function* () {
        yield* index.upsert(fp4, [
          { id: id(1), vector: unit(1, 0, 0, 0) },
          { id: id(2), vector: unit(0, 1, 0, 0) }
        ])
        yield* index.remove(fp4, [id(1), id(99)])
        expect(yield* index.listIds(fp4)).toEqual([2])
        expect((yield* index.search(fp4, unit(1, 0, 0, 0), 5)).map((h) => h.id)).toEqual([2])
      }))

    test("never mixes fingerprints: same ids, separate collections, both listed", (index) =>
      Effect.gen(function* () {
        const next = seededRandom(7)
        yield* index.upsert(fp4, [{ id: id(1), vector: unit(1, 0, 0, 0) }])
        yield* index.upsert(fp384, [
          { id: id(1), vector: randomVector(next, 384) },
          { id: id(2), vector: randomVector(next, 384) }
        ])
        expect(yield* index.count(fp4)).toBe(1)
        expect(yield* index.count(fp384)).toBe(2)
        yield* index.remove(fp384, [id(1)])
        expect(yield* index.listIds(fp4)).toEqual([1])
        expect([...(yield* index.fingerprints())].sort()).toEqual([fp384.key, fp4.key].sort())
      }))

    test("refuses a vector whose length is not the fingerprint's dimension", (index) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(index.upsert(fp4, [{ id: id(1), vector: unit(1, 0, 0) }]))
        expect(error._tag).toBe("VectorIndexError")
        expect(error.message).toContain("3 dimensions")
        expect(yield* index.count(fp4)).toBe(0)
        expect((yield* Effect.flip(index.search(fp4, unit(1, 0), 1)))._tag).toBe("VectorIndexError")
      }))

    test("finds the same top 10 as a brute-force cosine scan over 600 random 384-d vectors", (index) =>
      Effect.gen(function* () {
        const next = seededRandom(42)
        const points = Array.from({ length: 600 }, (_, i) => ({ id: id(i + 1), vector: randomVector(next, 384) }))
        yield* index.upsert(fp384, points)
        expect(yield* index.count(fp384)).toBe(600)
        for (let q = 0; q < 5; q++) {
          const query = randomVector(next, 384)
          const expected = points
            .map((p) => ({ id: p.id, score: cosine(query, p.vector) }))
            .sort((a, b) => b.score - a.score)
            .slice(0, 10)
          const hits = yield* index.search(fp384, query, 10)
          expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id))
          hits.forEach((h, i) => {
            expect(h.score).toBeCloseTo(expected[i]?.score ?? Number.NaN, 4)
          })
        }
      }))
  })

// --- sqlite-vec: a real SQLite file in a temp directory ---------------------------------------

const sqliteFile = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "blctx-vec-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => NodePath.join(dir, "context.db")))

const openSqlite = (filename: string) => SqliteClient.make({ filename }).pipe(Effect.provide(Reactivity.layer))

contract("SQLite vector tables", true, () =>
  Effect.gen(function* () {
    const sql = yield* openSqlite(yield* sqliteFile)
    return yield* makeSqliteVectorIndex(sql)
  })
)

describe("SQLite vector index specifics", () => {
  it.scoped("writes vectors in the caller's transaction: a rollback leaves none", () =>
    Effect.gen(function* () {
      const sql = yield* openSqlite(yield* sqliteFile)
      const index = yield* makeSqliteVectorIndex(sql)
      yield* sql`CREATE TABLE chunks (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT`
      const write = Effect.gen(function* () {
        yield* sql`INSERT INTO chunks (id, text) VALUES (1, 'hello')`
        yield* index.upsert(fp4, [{ id: id(1), vector: unit(1, 0, 0, 0) }])
        return yield* Effect.fail("crash after writing" as const)
      })
      expect(yield* Effect.flip(sql.withTransaction(write))).toBe("crash after writing")
      expect(yield* sql`SELECT count(*) AS n FROM chunks`).toEqual([{ n: 0 }])
      expect(yield* index.count(fp4)).toBe(0)
      yield* sql.withTransaction(
        Effect.zipRight(
          sql`INSERT INTO chunks (id, text) VALUES (1, 'hello')`,
          index.upsert(fp4, [{ id: id(1), vector: unit(1, 0, 0, 0) }])
        )
      )
      expect(yield* index.listIds(fp4)).toEqual([1])
    })
  )

  it.scoped("persists in the database file and is searchable from a read-only connection", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      yield* Effect.scoped(
        Effect.gen(function* () {
          const index = yield* makeSqliteVectorIndex(yield* openSqlite(file))
          yield* index.upsert(fp4, [{ id: id(7), vector: unit(0, 0, 1, 0) }])
        })
      )
      const reader = yield* SqliteClient.make({ filename: file, readonly: true, disableWAL: true }).pipe(
        Effect.provide(Reactivity.layer)
      )
      const index = yield* makeSqliteVectorIndex(reader)
      expect((yield* index.search(fp4, unit(0, 0, 1, 0), 1)).map((h) => h.id)).toEqual([7])
      expect(yield* index.fingerprints()).toEqual([fp4.key])
      const tables = yield* reader<{
        name: string
      }>`SELECT name FROM sqlite_master WHERE name LIKE 'vectors_%' AND type = 'table' ORDER BY name`
      expect(tables).toEqual([{ name: `vectors_${fp4.key}` }, { name: `vectors_${fp4.key}_removed` }])
    })
  )
})

// --- Qdrant: only against a real server (opt-in: BLCTX_QDRANT_URL) ------------------------------

const qdrantUrl = process.env.BLCTX_QDRANT_URL || undefined
const qdrantKey = process.env.BLCTX_QDRANT_API_KEY || undefined

contract("Qdrant (BLCTX_QDRANT_URL)", qdrantUrl !== undefined, () =>
  Effect.gen(function* () {
    // A fresh installation id per test: its collections are its own and are deleted afterwards.
    const installationId = randomUUID()
    const options = { url: qdrantUrl ?? "", apiKey: qdrantKey, installationId }
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const client = new QdrantClient({ url: options.url, ...(qdrantKey ? { apiKey: qdrantKey } : {}) })
        for (const fp of [fp4, fp384])
          await client.deleteCollection(collectionName(installationId, fp)).catch(() => false)
      })
    )
    return yield* makeQdrantIndex(options)
  })
)

describe("vector index layers", () => {
  it("name Qdrant collections after the installation and the fingerprint", () => {
    const fp = new ModelFingerprint({ ...fp4, key: "0123456789abcdef" })
    expect(collectionName("5b2f", fp)).toBe("blctx-5b2f-0123456789abcdef")
  })

  it.scoped("provide the SQLite vector index as a layer over the SqliteClient", () =>
    Effect.gen(function* () {
      const file = yield* sqliteFile
      const layer = Layer.effect(VectorIndex, Effect.flatMap(SqliteClient.SqliteClient, makeSqliteVectorIndex)).pipe(
        Layer.provide(SqliteClient.layer({ filename: file }))
      )
      const count = yield* Effect.flatMap(VectorIndex, (index) =>
        Effect.zipRight(index.upsert(fp4, [{ id: id(1), vector: unit(1, 0, 0, 0) }]), index.count(fp4))
      ).pipe(Effect.provide(layer))
      expect(count).toBe(1)
    })
  )
})
