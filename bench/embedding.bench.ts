import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Reactivity } from "@effect/experimental"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect } from "effect"
import { EmbeddingModel, FlagEmbedding } from "fastembed"
import {
  testModelData,
  testTokenizerPath,
  tinyModelFiles,
  tinyModelFolder,
  tinyModelSpec
} from "../layers/model-test-folder.js"
import { makeChunkTokenizer } from "../layers/model-tokenizer-live.js"
import { loadOnnxEmbedder } from "../layers/onnx-model-runtime.js"
import { makeSqliteVectorIndex } from "../layers/sqlite-vector-index.js"
import { chunkSpans } from "../src/chunking/chunker.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { DEFAULT_MODEL_SPEC } from "../src/embedding/model-spec.js"
import { ChunkId } from "../src/vectors/vector-index.js"
import { line, percentile } from "./measure.js"

const WORDS =
  "the importer reads each transcript line classifies the record and stores the message with its session turn role and source position so search can cite it exactly later on".split(
    " "
  )

/** A deterministic pseudo-random generator (mulberry32). */
const random = (seed: number) => {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const sentence = (next: () => number, words: number) =>
  Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)] ?? "the").join(" ")

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

const timeEach = async (n: number, f: (i: number) => Promise<unknown>) => {
  const out: Array<number> = []
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint()
    await f(i)
    out.push(ms(start))
  }
  return out.sort((a, b) => a - b)
}

const embedding = async (data: string) => {
  const { folder, dispose } = tinyModelFolder(data)
  try {
    const spec = tinyModelSpec(tinyModelFiles(data))
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const embedder = yield* loadOnnxEmbedder(folder, spec)
          const next = random(1)
          const passages = Array.from({ length: 512 }, () => sentence(next, 60 + Math.floor(next() * 200)))
          yield* embedder.embed(passages.slice(0, 32), "passage")
          const start = process.hrtime.bigint()
          yield* embedder.embed(passages, "passage")
          const elapsed = ms(start)
          line("tiny model, 512 passages (60-260 words)", `${((passages.length / elapsed) * 1000).toFixed(0)} texts/s`)
          const queries = Array.from({ length: 50 }, () => sentence(next, 8))
          const ours = yield* Effect.promise(() =>
            timeEach(queries.length, (i) => Effect.runPromise(embedder.embed([queries[i] ?? ""], "query")))
          )
          const fastembed = yield* Effect.promise(() =>
            FlagEmbedding.init({
              model: EmbeddingModel.CUSTOM,
              modelAbsoluteDirPath: folder,
              modelName: "model_optimized.onnx",
              showDownloadProgress: false
            })
          )
          const theirs = yield* Effect.promise(() =>
            timeEach(queries.length, (i) => fastembed.queryEmbed(queries[i] ?? ""))
          )
          line(
            "short query p50: ours / FastEmbed (pads to 512)",
            `${percentile(ours, 50).toFixed(2)} ms / ${percentile(theirs, 50).toFixed(2)} ms (ratio ${(percentile(theirs, 50) / percentile(ours, 50)).toFixed(1)}x)`
          )
        })
      )
    )
  } finally {
    dispose()
  }
}

const realModel = async (dir: string) => {
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const embedder = yield* loadOnnxEmbedder(dir, DEFAULT_MODEL_SPEC)
        const next = random(2)
        const passages = Array.from({ length: 128 }, () => sentence(next, 200))
        yield* embedder.embed(passages.slice(0, 8), "passage")
        const start = process.hrtime.bigint()
        yield* embedder.embed(passages, "passage")
        line("bge-small-en, 128 passages of 200 words", `${((passages.length / ms(start)) * 1000).toFixed(1)} texts/s`)
      })
    )
  )
}

const chunking = async (data: string) => {
  const tokenizer = await Effect.runPromise(makeChunkTokenizer(testTokenizerPath(data)))
  const next = random(3)
  const messages = Array.from({ length: 200 }, () => sentence(next, 50 + Math.floor(next() * 1500)))
  let tokens = 0
  let chunks = 0
  const start = process.hrtime.bigint()
  for (const m of messages) {
    const spans = await Effect.runPromise(tokenizer.spans(m))
    tokens += spans.length
    chunks += chunkSpans(m, spans).length
  }
  const elapsed = ms(start)
  line(
    "chunking (tokenize + 384/48 windows)",
    `${(((tokens / elapsed) * 1000) / 1e6).toFixed(2)} M tokens/s (${chunks} chunks)`
  )
}

/** Exact top-k by a plain scan of unit vectors (dot product = cosine). */
const scanTopK = (matrix: Float32Array, dims: number, query: Float32Array, k: number) => {
  const n = matrix.length / dims
  const best: Array<{ i: number; s: number }> = []
  for (let r = 0; r < n; r++) {
    let dot = 0
    const base = r * dims
    for (let d = 0; d < dims; d++) dot += (matrix[base + d] ?? 0) * (query[d] ?? 0)
    if (best.length < k || dot > (best[best.length - 1]?.s ?? -Infinity)) {
      best.push({ i: r, s: dot })
      best.sort((a, b) => b.s - a.s)
      if (best.length > k) best.pop()
    }
  }
  return best
}

const unitRandom = (next: () => number, dims: number) => {
  const v = new Float32Array(dims)
  let norm = 0
  for (let d = 0; d < dims; d++) {
    const x = next() * 2 - 1
    v[d] = x
    norm += x * x
  }
  norm = Math.sqrt(norm)
  for (let d = 0; d < dims; d++) v[d] = (v[d] ?? 0) / norm
  return v
}

const knn = async (n: number) => {
  const dims = 384
  const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-bench-vec-"))
  try {
    const fingerprint = fingerprintOf(DEFAULT_MODEL_SPEC)
    const next = random(n)
    const matrix = new Float32Array(n * dims)
    for (let r = 0; r < n; r++) matrix.set(unitRandom(next, dims), r * dims)
    const queries = Array.from({ length: 30 }, () => unitRandom(next, dims))
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqliteClient.make({ filename: NodePath.join(dir, "bench.db") }).pipe(
            Effect.provide(Reactivity.layer)
          )
          const index = yield* makeSqliteVectorIndex(sql)
          const start = process.hrtime.bigint()
          for (let r = 0; r < n; r += 1000) {
            const points = []
            for (let j = r; j < Math.min(n, r + 1000); j++) {
              points.push({ id: ChunkId.make(j + 1), vector: matrix.subarray(j * dims, (j + 1) * dims) })
            }
            yield* index.upsert(fingerprint, points)
          }
          const insert = ms(start)
          const vec = yield* Effect.promise(() =>
            timeEach(queries.length, (i) =>
              Effect.runPromise(index.search(fingerprint, queries[i] ?? new Float32Array(dims), 10))
            )
          )
          const scan = yield* Effect.promise(() =>
            timeEach(queries.length, async (i) => scanTopK(matrix, dims, queries[i] ?? new Float32Array(dims), 10))
          )
          const label = `${n / 1000}k x 384`
          line(`sqlite-vec upsert ${label}`, `${((n / insert) * 1000).toFixed(0)} vectors/s`)
          line(
            `sqlite-vec top-10 p50 / p95, ${label}`,
            `${percentile(vec, 50).toFixed(1)} ms / ${percentile(vec, 95).toFixed(1)} ms`
          )
          line(
            `Float32Array scan p50 / p95, ${label}`,
            `${percentile(scan, 50).toFixed(1)} ms / ${percentile(scan, 95).toFixed(1)} ms`
          )
          line(`sqlite-vec / scan (p50), ${label}`, `${(percentile(vec, 50) / percentile(scan, 50)).toFixed(2)}x`)
        })
      )
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Embedding and vector figures: model throughput, chunking throughput, KNN latency. */
export const run = async () => {
  const data = testModelData()
  if (data === undefined) {
    line("embedding throughput (tiny model)", "skipped: BLCTX_TEST_MODEL_DATA is not set")
    line("chunking throughput", "skipped: BLCTX_TEST_MODEL_DATA is not set")
  } else {
    await embedding(data)
    await chunking(data)
  }
  const modelDir = process.env.BLCTX_MODEL_DIR || undefined
  if (modelDir === undefined) line("embedding throughput (bge-small-en)", "skipped: BLCTX_MODEL_DIR is not set")
  else await realModel(modelDir)
  await knn(10_000)
  await knn(100_000)
}
