import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Reactivity } from "@effect/experimental"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect } from "effect"
import { EmbeddingModel, FlagEmbedding } from "fastembed"
import { makeChunkTokenizer } from "../layers/model-tokenizer-live.js"
import { DEFAULT_MAX_BATCH_TOKENS, loadOnnxEmbedder, loadTokenizer } from "../layers/onnx-model-runtime.js"
import { makeSqliteVectorIndex } from "../layers/sqlite-vector-index.js"
import { chunkSpans } from "../src/chunking/chunker.js"
import { DEFAULT_MODEL_SPEC, ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { batchesByLength } from "../src/embedding/pooling.js"
import { ChunkId } from "../src/vectors/vector-index.js"
import {
  testModelData,
  testTokenizerPath,
  tinyModelFiles,
  tinyModelFolder,
  tinyModelSpec
} from "../testing/model-test-folder.js"
import { BENCH_MODEL_ENV, benchModelDir } from "./bench-model.js"
import { figure, line, percentile } from "./measure.js"
import { seededRandom } from "./seeded-random.js"
import { makeZipfHistory } from "./zipf-history.js"

const WORDS =
  "the importer reads each transcript line classifies the record and stores the message with its session turn role and source position so search can cite it exactly later on".split(
    " "
  )

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
          const next = seededRandom(1)
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
        const next = seededRandom(2)
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
  const next = seededRandom(3)
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
    const next = seededRandom(n)
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
          line(`vector index upsert ${label}`, `${((n / insert) * 1000).toFixed(0)} vectors/s`)
          line(
            `vector index top-10 p50 / p95, ${label}`,
            `${percentile(vec, 50).toFixed(1)} ms / ${percentile(vec, 95).toFixed(1)} ms`
          )
          line(
            `Float32Array scan p50 / p95, ${label}`,
            `${percentile(scan, 50).toFixed(1)} ms / ${percentile(scan, 95).toFixed(1)} ms`
          )
          line(`vector index / scan (p50), ${label}`, `${(percentile(vec, 50) / percentile(scan, 50)).toFixed(2)}x`)
        })
      )
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** What the Python original reports for the real bge-small-en on 2 threads, with its own chunk mix. */
const PYTHON_CHUNKS_PER_S = 21.6
/** Texts per `embed` call, as the importer makes them (EMBED_BATCH in src/importer/import-file.ts). */
const IMPORTER_CALL = 32

const loadNote = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ")} (1/5/15 min)`

/**
 * The messages an importer indexes (request, commentary, final answer of each turn), in file
 * order, from a Zipf synthetic history (`zipf-history.ts`: log-normal lengths, a few words to
 * several thousand characters).
 */
const zipfMessages = (files: number, turns: number): Array<string> => {
  const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-bench-zipf-"))
  try {
    const out: Array<string> = []
    for (const path of makeZipfHistory({ seed: 16 }).write(dir, files, turns)) {
      for (const l of readFileSync(path, "utf8").split("\n")) {
        if (l === "") continue
        const record = JSON.parse(l) as {
          type?: string
          payload?: { type?: string; content?: ReadonlyArray<{ text?: string }> }
        }
        if (record.type !== "response_item" || record.payload?.type !== "message") continue
        const text = record.payload.content?.[0]?.text
        if (text !== undefined) out.push(text)
      }
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The bge-small-shaped encoder (bge-small-en's architecture, random weights, the real tokenizer)
 * through `loadOnnxEmbedder`: full 384-token chunks, then the chunks of a long-tailed message mix,
 * at 1 and 2 intra-op threads. Batching variants: the texts grouped as the importer's calls make
 * them (32 per call, input order), with and without the per-run token budget, and everything in
 * one call (sorted by length globally). Each figure is the best of two runs, alternating variants.
 */
const bgeShaped = async (dir: string) => {
  const spec = new ModelSpec({ ...DEFAULT_MODEL_SPEC, prefixes: { query: "", passage: "" } })
  const chunker = await Effect.runPromise(makeChunkTokenizer(NodePath.join(dir, "tokenizer.json")))
  const chunksOf = async (messages: ReadonlyArray<string>) => {
    const out: Array<string> = []
    for (const m of messages) {
      const spans = await Effect.runPromise(chunker.spans(m))
      for (const c of chunkSpans(m, spans)) out.push(c.text)
    }
    return out
  }
  const next = seededRandom(4)
  // Every window but the last of a long text is a full 384-token chunk.
  const long = await chunksOf([sentence(next, 12_000)])
  const full = long.slice(0, -1).slice(0, 16)
  const mix = (await chunksOf(zipfMessages(4, 10))).slice(0, 96)
  const lengthsOf = (texts: ReadonlyArray<string>) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const tokenizer = yield* loadTokenizer(dir, spec.max_tokens)
        const encodings = yield* Effect.promise(() => Promise.all(texts.map((t) => tokenizer.encode(t))))
        return encodings.map((e) => e.getLength())
      })
    )
  const fullLengths = await lengthsOf(full)
  const mixLengths = await lengthsOf(mix)
  const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
  const sortedMix = [...mixLengths].sort((a, b) => a - b)
  line("bge-shaped model", `$${BENCH_MODEL_ENV} (random weights: figures are cost, never quality)`)
  line("machine", loadNote())
  line(
    "384-token chunks",
    `${full.length} chunks of ${Math.min(...fullLengths)}-${Math.max(...fullLengths)} tokens with [CLS]/[SEP]`
  )
  line(
    "realistic mix",
    `${mix.length} chunks of ${sum(mixLengths)} tokens (p50 ${percentile(sortedMix, 50)}, p90 ${percentile(sortedMix, 90)}, max ${Math.max(...mixLengths)}), ${(
      (mixLengths.filter((n) => n >= 380).length / mix.length) * 100
    ).toFixed(0)}% full chunks`
  )

  interface Variant {
    readonly name: string
    readonly perCall: number
    readonly maxBatchTokens: number
  }
  /** Real tokens / padded tokens the encoder sees with a variant's grouping. */
  const paddingEfficiency = (lengths: ReadonlyArray<number>, v: Variant) => {
    let padded = 0
    for (let i = 0; i < lengths.length; i += v.perCall) {
      const call = lengths.slice(i, i + v.perCall)
      for (const batch of batchesByLength(call, 32, v.maxBatchTokens)) {
        padded += batch.length * Math.max(...batch.map((j) => call[j] ?? 0))
      }
    }
    return sum(lengths) / padded
  }
  const budget = DEFAULT_MAX_BATCH_TOKENS
  const before: Variant = {
    name: "calls of 32 as they come, 32 per run",
    perCall: IMPORTER_CALL,
    maxBatchTokens: Infinity
  }
  const now: Variant = {
    name: `calls of 32, sorted, <= ${budget} tokens per run`,
    perCall: IMPORTER_CALL,
    maxBatchTokens: budget
  }
  const globalSorted: Variant = { name: "one call, sorted, 32 per run", perCall: Infinity, maxBatchTokens: Infinity }
  const globalBudget: Variant = {
    name: `one call, sorted, <= ${budget} tokens per run`,
    perCall: Infinity,
    maxBatchTokens: budget
  }

  for (const threads of [1, 2]) {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const embedders = new Map<number, Effect.Effect.Success<ReturnType<typeof loadOnnxEmbedder>>>()
          for (const tokens of [Infinity, budget]) {
            embedders.set(
              tokens,
              yield* loadOnnxEmbedder(dir, spec, { intraOpNumThreads: threads, maxBatchTokens: tokens })
            )
          }
          const seconds = (texts: ReadonlyArray<string>, v: Variant) =>
            Effect.gen(function* () {
              const embedder = embedders.get(v.maxBatchTokens)
              if (embedder === undefined) return Number.NaN
              const start = process.hrtime.bigint()
              const step = Number.isFinite(v.perCall) ? v.perCall : texts.length
              for (let i = 0; i < texts.length; i += step) yield* embedder.embed(texts.slice(i, i + step), "passage")
              return ms(start) / 1000
            })
          // Warm both sessions (ONNX Runtime plans its memory on the first runs).
          for (const e of embedders.values()) yield* e.embed(full.slice(0, 4), "passage")
          const best = (texts: ReadonlyArray<string>, variants: ReadonlyArray<Variant>) =>
            Effect.gen(function* () {
              const times = variants.map(() => Number.POSITIVE_INFINITY)
              for (let rep = 0; rep < 2; rep++) {
                for (const [i, v] of variants.entries())
                  times[i] = Math.min(times[i] ?? Infinity, yield* seconds(texts, v))
              }
              return times
            })
          const python =
            threads === 2 ? ` (Python original, real model, 2 threads: ${PYTHON_CHUNKS_PER_S} chunks/s)` : ""
          const fullVariants = [before, now]
          const fullTimes = yield* best(full, fullVariants)
          for (const [i, v] of fullVariants.entries()) {
            const t = fullTimes[i] ?? Number.NaN
            line(
              `${threads} thread${threads > 1 ? "s" : ""}, 384-token chunks, ${v.perCall === IMPORTER_CALL && v.maxBatchTokens === Infinity ? "32 per run" : `<= ${budget} tokens per run`}`,
              `${(full.length / t).toFixed(1)} chunks/s, ${(sum(fullLengths) / t).toFixed(0)} tokens/s${python}`
            )
          }
          const mixVariants = [before, now, globalSorted, globalBudget]
          const mixTimes = yield* best(mix, mixVariants)
          for (const [i, v] of mixVariants.entries()) {
            const t = mixTimes[i] ?? Number.NaN
            line(
              `${threads} thread${threads > 1 ? "s" : ""}, mix, ${v.name}`,
              `${(mix.length / t).toFixed(1)} chunks/s, ${(sum(mixLengths) / t).toFixed(0)} tokens/s, ${(paddingEfficiency(mixLengths, v) * 100).toFixed(0)}% of tokens real${i === 0 ? python : ""}`
            )
          }
          const now384 = fullTimes[1] ?? Number.NaN
          figure(
            `bge-small-en size, ${threads} thread${threads > 1 ? "s" : ""}, 384-token chunks`,
            full.length / now384,
            "chunks/s",
            {
              ...(threads === 2
                ? {
                    reference: { name: "Python original", value: PYTHON_CHUNKS_PER_S, reported: "reported, real model" }
                  }
                : {})
            }
          )
          const gain = (mixTimes[0] ?? Number.NaN) / (mixTimes[1] ?? Number.NaN)
          line(
            `${threads} thread${threads > 1 ? "s" : ""}, mix: sorted + budget / as they come`,
            `${gain.toFixed(2)}x throughput`
          )
        })
      )
    )
  }
  line("machine (after)", loadNote())
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
  const benchModel = benchModelDir()
  if (benchModel === undefined) line("embedding throughput (bge-shaped)", "skipped: BLCTX_BENCH_MODEL_DIR is not set")
  else await bgeShaped(benchModel)
  await knn(10_000)
  await knn(100_000)
}
