import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { EmbedError } from "../embedding/embedder.js"
import { fixturesDir, importOnce, makeTempDir, withHistoryDb } from "../importer/history-db.test-support.js"
import { type JobId, JobId as JobIdSchema } from "../jobs/job.js"
import type { RegisteredJobKind } from "../jobs/job-kind.js"
import { expandContext } from "../retrieval/context.js"
import { SearchRequest } from "../retrieval/contract.js"
import { search } from "../retrieval/search.js"
import { EmbeddingFailed, HistoryStoreError } from "./import-errors.js"
import { type ImportChunking, IndexingServices } from "./import-services.js"
import { makeRepairKind } from "./repair-kind.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-repair-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** A chunker with another tokenizer id: three words per chunk, exact character ranges. */
const threeWordPieces = (text: string) => {
  const words = [...text.matchAll(/\S+/g)]
  const pieces = []
  for (let i = 0; i < words.length; i += 3) {
    const first = words[i]
    const last = words[Math.min(i + 2, words.length - 1)]
    if (first?.index === undefined || last?.index === undefined) continue
    const start = first.index
    const end = last.index + last[0].length
    pieces.push({ start, end, text: text.slice(start, end) })
  }
  return pieces
}
const threeWords: ImportChunking = {
  tokenizer: "three-words",
  chunkAll: (texts) => Effect.sync(() => texts.map(threeWordPieces))
}

const jobId = JobIdSchema.make("00000000-0000-4000-8000-000000000001") as JobId

/**
 * Runs a registered kind the way the job runner does: each commit is one transaction with its
 * checkpoint. `crashAfter` stops the run (as a kill would) after that many commits.
 */
const runKind = (
  kind: RegisteredJobKind,
  checkpoint: Option.Option<string>,
  crashAfter = Number.POSITIVE_INFINITY,
  params = "{}",
  progress: Array<{ readonly done: number; readonly total: number | undefined }> = []
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let saved = checkpoint
    let commits = 0
    const exit = yield* Effect.exit(
      kind.run(params, checkpoint, {
        jobId,
        commit: (work, next) =>
          Effect.suspend(() => {
            if (commits >= crashAfter) return Effect.die("killed")
            commits++
            return sql.withTransaction(work).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.tap(() => {
                saved = Option.some(next.checkpoint)
                progress.push({ done: next.progressDone, total: next.progressTotal })
              }),
              // The kind's own errors pass; the transaction's (BEGIN, COMMIT) are not under test.
              Effect.catchIf(
                (e): e is SqlError => e instanceof SqlError,
                (e) => Effect.die(e)
              )
            )
          })
      })
    )
    return { exit, saved }
  })

/** The fake model, or one that fails on every batch. */
const servicesWith = (brokenModel: boolean) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient) as SqliteClient.SqliteClient
    const vectors = yield* makeSqliteVectorIndex(sql)
    const fake = makeFakeEmbedder().embedder
    const embedder = brokenModel
      ? { ...fake, embed: () => Effect.fail(new EmbedError({ folder: "/models/fake", message: "bad graph" })) }
      : fake
    const layer = Layer.succeed(IndexingServices, {
      current: Effect.succeed({
        chunking: threeWords,
        embedding: Option.some({
          fingerprint: embedder.fingerprint,
          embed: (texts: ReadonlyArray<string>) => embedder.embed(texts, "passage"),
          embedQuery: (text: string) =>
            Effect.map(embedder.embed([text], "query"), (vectors) => vectors[0] ?? new Float32Array(embedder.dims)),
          vectors
        })
      }),
      unavailable: Effect.succeed(Option.none())
    })
    return { layer, vectors, fingerprint: embedder.fingerprint }
  })

const services = servicesWith(false)

const countWhere = (where: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM chunks WHERE ${where}`).pipe(Effect.map((r) => r[0]?.n ?? 0))
  )

describe("repair job", () => {
  it.effect("re-chunks on the model's tokenizer, embeds every pending chunk, prunes removed vectors", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const path = NodePath.join(dir, "s.jsonl")
        Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), path)
        yield* importOnce(path)
        expect(yield* countWhere("vector_fingerprint IS NULL")).toBe(6)
        const { layer, vectors, fingerprint } = yield* services
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        const { exit } = yield* runKind(kind, Option.none())
        expect(exit._tag).toBe("Success")
        const chunks = yield* countWhere("1 = 1")
        expect(chunks).toBeGreaterThan(6)
        expect(yield* countWhere("tokenizer = 'three-words'")).toBe(chunks)
        expect(yield* countWhere(`vector_fingerprint = '${fingerprint.key}'`)).toBe(chunks)
        expect(yield* vectors.count(fingerprint)).toBe(chunks)

        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM chunks WHERE message_id = (SELECT min(id) FROM messages)`
        const second = yield* runKind(kind, Option.none())
        expect(second.exit._tag === "Success" && second.exit.value.counts?.vectors_pruned).toBeGreaterThan(0)
        expect(yield* vectors.count(fingerprint)).toBe(yield* countWhere("1 = 1"))

        // force rebuilds every vector, not only missing ones.
        const rebuilt = yield* runKind(kind, Option.none(), Number.POSITIVE_INFINITY, '{"force":true}')
        const remaining = yield* countWhere("1 = 1")
        expect(rebuilt.exit._tag === "Success" && rebuilt.exit.value.counts?.vectors_embedded).toBe(remaining)
        expect(yield* vectors.count(fingerprint)).toBe(remaining)
      })
    )
  )

  it.effect("a context id from a search before re-chunking resolves to the same text after it", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const path = NodePath.join(dir, "s.jsonl")
        Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), path)
        yield* importOnce(path)
        const before = (yield* search(SearchRequest.make({ query: "test zone UTC" }), Option.none(), "none")).results
        expect(before.length).toBeGreaterThan(0)
        const { layer } = yield* services
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        expect((yield* runKind(kind, Option.none())).exit._tag).toBe("Success")
        expect(yield* countWhere("tokenizer <> 'three-words'")).toBe(0)
        for (const hit of before) {
          const context = yield* expandContext({ context_id: hit.context_id, limit: 20, char_offset: 0 })
          const anchor = context.messages.find((m) => m.is_anchor)
          const range = context.anchor.chunk
          expect(anchor?.text.slice(range?.char_start, range?.char_end)).toBe(hit.text)
        }
      })
    )
  )

  it.effect("an interrupted repair resumes from its checkpoint and ends like a clean one", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        for (const name of ["new-format-turn-ids.jsonl", "old-format-no-turn-ids.jsonl", "compaction.jsonl"]) {
          const path = NodePath.join(dir, name)
          Fs.copyFileSync(NodePath.join(fixturesDir, name), path)
          yield* importOnce(path)
        }
        const { layer, vectors, fingerprint } = yield* services
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        let checkpoint = Option.none<string>()
        for (let attempt = 0; attempt < 20; attempt++) {
          const { exit, saved } = yield* runKind(kind, checkpoint, 1)
          checkpoint = saved
          if (exit._tag === "Success") break
        }
        const chunks = yield* countWhere("1 = 1")
        expect(yield* countWhere("vector_fingerprint IS NULL")).toBe(0)
        expect(yield* vectors.count(fingerprint)).toBe(chunks)
        expect((yield* vectors.listIds(fingerprint)).length).toBe(new Set(yield* vectors.listIds(fingerprint)).size)
      })
    )
  )

  it.effect("progress counts chunks embedded out of chunks to embed: done never exceeds total", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        for (const name of ["new-format-turn-ids.jsonl", "old-format-no-turn-ids.jsonl"]) {
          const path = NodePath.join(dir, name)
          Fs.copyFileSync(NodePath.join(fixturesDir, name), path)
          yield* importOnce(path)
        }
        const { layer } = yield* services
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        // The job store keeps the last total when a commit does not name one (COALESCE).
        const stored = (list: ReadonlyArray<{ readonly done: number; readonly total: number | undefined }>) => {
          let total: number | undefined
          return list.map((p) => {
            total = p.total ?? total
            return { done: p.done, total }
          })
        }
        const progress: Array<{ done: number; total: number | undefined }> = []
        const { exit } = yield* runKind(kind, Option.none(), Number.POSITIVE_INFINITY, "{}", progress)
        expect(exit._tag).toBe("Success")
        const chunks = yield* countWhere("1 = 1")
        const rows = stored(progress)
        for (const row of rows) if (row.total !== undefined) expect(row.done).toBeLessThanOrEqual(row.total)
        // Re-chunking reports no progress (its unit is messages); embedding and prune end at chunks/chunks.
        expect(rows[0]).toEqual({ done: 0, total: undefined })
        expect(rows.at(-1)).toEqual({ done: chunks, total: chunks })
        expect(exit._tag === "Success" && exit.value.counts?.vectors_embedded).toBe(chunks)
        expect(exit._tag === "Success" && exit.value.counts?.messages_rechunked).toBeGreaterThan(0)

        // A repair with nothing to do ends at 0/0, not at something/0.
        const idle: Array<{ done: number; total: number | undefined }> = []
        yield* runKind(kind, Option.none(), Number.POSITIVE_INFINITY, "{}", idle)
        expect(stored(idle).at(-1)).toEqual({ done: 0, total: 0 })
      })
    )
  )

  it.effect("an interrupted repair keeps done ≤ total in the same unit across every resumption", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        for (const name of ["new-format-turn-ids.jsonl", "old-format-no-turn-ids.jsonl", "compaction.jsonl"]) {
          const path = NodePath.join(dir, name)
          Fs.copyFileSync(NodePath.join(fixturesDir, name), path)
          yield* importOnce(path)
        }
        const { layer } = yield* services
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        let checkpoint = Option.none<string>()
        const progress: Array<{ done: number; total: number | undefined }> = []
        for (let attempt = 0; attempt < 40; attempt++) {
          const { exit, saved } = yield* runKind(kind, checkpoint, 1, "{}", progress)
          checkpoint = saved
          if (exit._tag === "Success") break
        }
        const chunks = yield* countWhere("1 = 1")
        let total: number | undefined
        for (const p of progress) {
          total = p.total ?? total
          if (total !== undefined) expect(p.done).toBeLessThanOrEqual(total)
        }
        expect(progress.at(-1)?.done).toBe(chunks)
        expect(total).toBe(chunks)
      })
    )
  )

  it.effect("a failing model fails the repair with EmbeddingFailed naming it; nothing of the batch is committed", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const path = NodePath.join(dir, "s.jsonl")
        Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), path)
        yield* importOnce(path)
        const { layer, fingerprint } = yield* servicesWith(true)
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        const { exit } = yield* runKind(kind, Option.none())
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(error).toBeInstanceOf(EmbeddingFailed)
        expect(error?.message).toContain(fingerprint.label)
        expect(error?.message).toContain("bad graph")
        expect(yield* countWhere("vector_fingerprint IS NOT NULL")).toBe(0)
      })
    )
  )

  it.effect("a store that refuses a batch fails the repair with HistoryStoreError", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const path = NodePath.join(dir, "s.jsonl")
        Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), path)
        yield* importOnce(path)
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TRIGGER refuse BEFORE INSERT ON chunks BEGIN SELECT RAISE(ABORT, 'refused by test'); END`
        const { layer } = yield* services
        const kind = yield* makeRepairKind().pipe(Effect.provide(layer))
        const { exit } = yield* runKind(kind, Option.none())
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(error).toBeInstanceOf(HistoryStoreError)
        expect(error?.message).toContain("refused by test")
        expect(yield* countWhere("tokenizer = 'three-words'")).toBe(0)
      })
    )
  )
})
