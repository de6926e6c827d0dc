import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Reactivity } from "@effect/experimental"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Option } from "effect"
import { stopProcess } from "../layers/daemon-process-table.js"
import { loadOnnxEmbedder } from "../layers/onnx-model-runtime.js"
import { COLLECTIONS_TABLE, makeSqliteVectorIndex, vectorTableName } from "../layers/sqlite-vector-index.js"
import { loadPackageSynonyms } from "../programs/package-files.js"
import { DEFAULT_MODEL_SPEC, ModelFile, ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { MAX_REPHRASINGS, Score, type SearchRequest } from "../src/retrieval/contract.js"
import { convexFusion } from "../src/retrieval/fusion.js"
import { VECTOR_CANDIDATES } from "../src/retrieval/history-reads.js"
import { type ChunkRow, chunksByIds, searchLexical } from "../src/retrieval/lexical-search.js"
import { search, toHit } from "../src/retrieval/search.js"
import { Synonyms } from "../src/retrieval/synonyms.js"
import { applyTextBudget } from "../src/retrieval/text-budget.js"
import { type ContextStatusResponse, connect } from "../src/rpc/client.js"
import { TOKENIZER_FILES, testModelData } from "../testing/model-test-folder.js"
import type { ModelServer } from "../testing/model-test-server.js"
import {
  BENCH_MODEL_ENV,
  benchModelDir,
  installBenchModel,
  type ModelFolderBytes,
  modelConfigFor,
  readModelFolder
} from "./bench-model.js"
import { benchHome, daemonLogTail, figure, line, percentile, rssOf } from "./measure.js"
import { relabelVectors } from "./relabel-vectors.js"
import { STANDIN_DIMS, standinModelBytes } from "./standin-model.js"
import { makeZipfHistory } from "./zipf-history.js"

const run = promisify(execFile)
const require = createRequire(import.meta.url)
const cli = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "bin", "blctx.mjs")

const TURNS_PER_FILE = 100
const QUERIES = 200
const LARGE_ENV = "BLCTX_BENCH_LARGE"
const STANDIN_REPO = "blctx-bench/standin-384"
/** Chunks per rollout file of the Zipf history, before the first stage measures it. */
const FIRST_GUESS_CHUNKS_PER_FILE = 340
/** How long a stage may wait for every chunk to have a vector. */
const VECTOR_WAIT_MS = 90 * 60_000

interface Db {
  prepare(sql: string): { all(): Array<Record<string, unknown>>; iterate(): IterableIterator<Record<string, unknown>> }
  close(): void
}
const Database = require("better-sqlite3") as new (file: string, options: { readonly readonly: boolean }) => Db

const msSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const p50p95 = (xs: ReadonlyArray<number>) => {
  const s = sorted(xs)
  return `${percentile(s, 50).toFixed(2)} ms / ${percentile(s, 95).toFixed(2)} ms`
}

/** The folder holding bge-small-en's tokenizer files: the test model data's, or the bench model's. */
const tokenizerDir = (): string | undefined => {
  const data = testModelData()
  if (data !== undefined) return NodePath.join(data, "fast-bge-small-en")
  return benchModelDir()
}

/** The stand-in encoder (generated now) with bge-small-en's tokenizer files. */
const standinFolder = (tokenizers: string): ModelFolderBytes => ({
  repo: STANDIN_REPO,
  dims: STANDIN_DIMS,
  files: [
    { name: "model_optimized.onnx", bytes: standinModelBytes() },
    ...TOKENIZER_FILES.map((name) => ({ name, bytes: readFileSync(NodePath.join(tokenizers, name)) }))
  ]
})

/** The spec the daemon builds from config.json's override (the default spec, with its keys replaced). */
const specOf = (folder: ModelFolderBytes) => {
  const model = modelConfigFor(folder, "http://127.0.0.1:9").model
  return new ModelSpec({
    ...DEFAULT_MODEL_SPEC,
    endpoint: model.endpoint,
    repo: model.repo,
    revision: model.revision,
    dims: model.dims,
    files: model.files.map((f) => new ModelFile(f)) as unknown as readonly [ModelFile, ...Array<ModelFile>],
    prefixes: model.prefixes,
    sanity: { ...model.sanity, passages: model.sanity.passages as unknown as readonly [string, ...Array<string>] }
  })
}

/** The stand-in as a folder on disk, for loading it in this process. */
const writeFolder = (folder: ModelFolderBytes, tokenizers: string) => {
  const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-standin-"))
  for (const f of folder.files) {
    if (f.name === "model_optimized.onnx") writeFileSync(NodePath.join(dir, f.name), f.bytes)
    else symlinkSync(NodePath.join(tokenizers, f.name), NodePath.join(dir, f.name))
  }
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Every stored vector (float32, the exact ones) of the collection of `key`, in one matrix, with its chunk ids. */
const storedVectors = (database: string, key: string, dims: number) => {
  const db = new Database(database, { readonly: true })
  try {
    const registry = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = '${COLLECTIONS_TABLE}'`).all()
    if (Number(registry[0]?.n ?? 0) === 0) return { ids: new Float64Array(0), matrix: new Float32Array(0) }
    const table = vectorTableName({ key })
    const n = Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).all()[0]?.n ?? 0)
    const ids = new Float64Array(n)
    const matrix = new Float32Array(n * dims)
    let i = 0
    for (const r of db.prepare(`SELECT chunk_id AS id, embedding FROM ${table}`).iterate()) {
      if (i >= n) break
      const b = r.embedding as Buffer
      ids[i] = Number(r.id)
      matrix.set(new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), i * dims)
      i++
    }
    return { ids: ids.subarray(0, i), matrix: matrix.subarray(0, i * dims) }
  } finally {
    db.close()
  }
}

/** Exact top-k by a plain scan of unit vectors (dot product = cosine): ids and scores, best first. */
const scanTopK = (matrix: Float32Array, ids: Float64Array, dims: number, q: Float32Array, k: number) => {
  const bestScore = new Float64Array(k).fill(Number.NEGATIVE_INFINITY)
  const bestRow = new Int32Array(k).fill(-1)
  const n = ids.length
  for (let r = 0; r < n; r++) {
    const base = r * dims
    let dot = 0
    for (let d = 0; d < dims; d++) dot += (matrix[base + d] as number) * (q[d] as number)
    if (dot <= (bestScore[k - 1] as number)) continue
    let j = k - 1
    while (j > 0 && (bestScore[j - 1] as number) < dot) {
      bestScore[j] = bestScore[j - 1] as number
      bestRow[j] = bestRow[j - 1] as number
      j--
    }
    bestScore[j] = dot
    bestRow[j] = r
  }
  return Array.from(bestRow, (r, j) => ({ id: r < 0 ? -1 : (ids[r] ?? -1), score: bestScore[j] ?? 0 }))
}

interface StageFigures {
  readonly chunks: number
  /** From `index` until the daemon is ready (every chunk with a vector when a model is installed). */
  readonly indexSeconds: number
  readonly mode: string
  readonly p50: number
  readonly p95: number
  readonly vectorP50: number | null
  readonly scanP50: number | null
  readonly recall: number | null
  readonly rss: number
}

/** The parts of a search, timed in this process with the calls the query worker makes. */
const measureParts = (
  database: string,
  queries: ReadonlyArray<string>,
  model: { readonly folder: ModelFolderBytes; readonly tokenizers: string } | undefined
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* SqliteClient.make({ filename: database, readonly: true, disableWAL: true }).pipe(
        Effect.provide(Reactivity.layer)
      )
      // In-process parts search as the daemon's query worker does: with the package's thesaurus.
      const synonyms = loadPackageSynonyms()
      const onConnection = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
        effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(Synonyms, synonyms))
      const times = {
        embed: [] as Array<number>,
        lexical: [] as Array<number>,
        narrowed: [] as Array<number>,
        vector: [] as Array<number>,
        fusion: [] as Array<number>,
        hydration: [] as Array<number>,
        total: [] as Array<number>
      }
      const timed = <A, E, R>(into: Array<number>, effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function* () {
          const start = process.hrtime.bigint()
          const a = yield* effect
          into.push(msSince(start))
          return a
        })
      // A week-like slice of the history: its middle tenth. A narrowed search keeps common words.
      const span = yield* onConnection(
        Effect.flatMap(
          SqlClient.SqlClient,
          (q) =>
            q<{ first: string; last: string }>`SELECT min(timestamp) AS first, max(timestamp) AS last FROM messages`
        )
      )
      const first = Date.parse(span[0]?.first ?? "")
      const tenth = (Date.parse(span[0]?.last ?? "") - first) / 10
      const slice = {
        since: new Date(first + 4.5 * tenth).toISOString(),
        until: new Date(first + 5.5 * tenth).toISOString()
      }
      const narrowed = (query: string) => timed(times.narrowed, onConnection(searchLexical(query, slice, 11, 0)))
      // Same number of candidates as search.ts's candidatesFor for a first page of 10.
      const request = (query: string): SearchRequest => ({ query, filters: {}, limit: 10, offset: 0 })
      const candidates = Math.min(500, Math.max(50, 10 * 3))

      if (model === undefined) {
        for (const query of queries) {
          const rows = yield* timed(times.lexical, onConnection(searchLexical(query, {}, 11, 0)))
          yield* narrowed(query)
          yield* timed(
            times.hydration,
            Effect.sync(() =>
              applyTextBudget(
                rows.slice(0, 10).map((row) => toHit(row, new Score({ kind: "bm25", value: row.rank }))),
                (h) => h.text,
                (h) => h
              )
            )
          )
        }
        return { times, exact: undefined }
      }

      const spec = specOf(model.folder)
      const fingerprint = fingerprintOf(spec)
      const { dir, dispose } = writeFolder(model.folder, model.tokenizers)
      yield* Effect.addFinalizer(() => Effect.sync(dispose))
      const embedder = yield* loadOnnxEmbedder(dir, spec)
      const index = yield* makeSqliteVectorIndex(sql)
      const [warm] = yield* embedder.embed(["warm up"], "query")
      // The first search loads this connection's compact matrix: timed apart, not as a query.
      const loadStart = process.hrtime.bigint()
      yield* index.search(fingerprint, warm ?? new Float32Array(STANDIN_DIMS), 10)
      const firstSearch = msSince(loadStart)
      const vectorQueries: Array<Float32Array> = []
      for (const query of queries) {
        const start = process.hrtime.bigint()
        const [v] = yield* timed(times.embed, embedder.embed([query], "query"))
        const vector = v ?? new Float32Array(STANDIN_DIMS)
        vectorQueries.push(vector)
        const hits = yield* timed(times.vector, index.search(fingerprint, vector, VECTOR_CANDIDATES))
        const lexical = yield* timed(times.lexical, onConnection(searchLexical(query, {}, candidates, 0)))
        yield* narrowed(query)
        const fused = yield* timed(
          times.fusion,
          Effect.sync(() =>
            convexFusion([
              lexical.map((r) => ({ id: r.chunk_id, score: -r.rank })),
              hits.map((h) => ({ id: h.id as number, score: h.score }))
            ])
          )
        )
        yield* timed(
          times.hydration,
          Effect.gen(function* () {
            const vectorRows = yield* onConnection(
              chunksByIds(
                hits.map((h) => h.id as number),
                {}
              )
            )
            const rows = new Map<number, ChunkRow>([...vectorRows, ...lexical].map((r) => [r.chunk_id, r]))
            const hitsOnPage = fused.slice(0, 10).flatMap((f) => {
              const row = rows.get(f.id)
              return row === undefined ? [] : [toHit(row, new Score({ kind: "fused", value: f.score }))]
            })
            return applyTextBudget(
              hitsOnPage,
              (h) => h.text,
              (h) => h
            )
          })
        )
        times.total.push(msSince(start))
      }
      // The whole read as the worker runs it (search.ts), for comparison with the sum of parts; and
      // the same read with the most rephrasings an agent may add (decision 0029): three more
      // words-only searches, here the next three queries' words.
      const whole: Array<number> = []
      const rephrased: Array<number> = []
      for (const [i, query] of queries.entries()) {
        const hits = yield* index.search(
          fingerprint,
          vectorQueries[i] ?? new Float32Array(STANDIN_DIMS),
          VECTOR_CANDIDATES
        )
        yield* timed(whole, onConnection(search(request(query), Option.some({ hits }), "")))
        const rephrasings = [1, 2, 3].map((k) => queries[(i + k) % queries.length] ?? query)
        yield* timed(rephrased, onConnection(search({ ...request(query), rephrasings }, Option.some({ hits }), "")))
      }

      // The vector part against a plain scan of the same vectors, and the index's top 10 against the exact one.
      const { ids, matrix } = storedVectors(database, fingerprint.key, STANDIN_DIMS)
      const scan: Array<number> = []
      const knn: Array<number> = []
      let found = 0
      for (const q of vectorQueries) {
        const start = process.hrtime.bigint()
        const exact = scanTopK(matrix, ids, STANDIN_DIMS, q, 10)
        scan.push(msSince(start))
        const got = yield* timed(knn, index.search(fingerprint, q, 10))
        // A returned id counts when it is in the exact top 10 or ties with its last score (identical texts).
        const exactIds = new Set(exact.map((e) => e.id))
        const floor = (exact[exact.length - 1]?.score ?? 0) - 1e-6
        for (const h of got.slice(0, 10)) if (exactIds.has(h.id as number) || h.score >= floor) found++
      }
      return {
        times: { ...times, whole, rephrased },
        exact: { scan, knn, firstSearch, vectors: ids.length, recall: found / (10 * Math.max(1, vectorQueries.length)) }
      }
    })
  )

/** Query embedding with an encoder of bge-small-en's real size, in this process. */
const realSizeQueryEmbedding = async (dir: string, queries: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const embedder = yield* loadOnnxEmbedder(dir, DEFAULT_MODEL_SPEC)
        yield* embedder.embed(["warm up"], "query")
        const times: Array<number> = []
        for (const q of queries) {
          const start = process.hrtime.bigint()
          yield* embedder.embed([q], "query")
          times.push(msSince(start))
        }
        return times
      })
    )
  )

/** The 200 searches through the daemon, after ten to warm it: sorted times, the status and the daemon's pid. */
const searchThroughDaemon = (
  socketPath: string,
  queries: ReadonlyArray<string>,
  ready: (s: ContextStatusResponse) => boolean
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* connect({ socketPath, timeout: "60 seconds" })
      // Each status call timed; while the daemon indexes, one it leaves unanswered for a minute
      // is counted and asked again (a figure of its own), not the end of the run.
      const statusWait = { calls: 0, longestMs: 0, unanswered: 0, longestPingMs: 0 }
      // A ping reads nothing: slow pings mean the daemon's event loop was held, slow statuses alone the reads.
      const timedPing = Effect.gen(function* () {
        const start = process.hrtime.bigint()
        yield* Effect.either(client.Ping())
        statusWait.longestPingMs = Math.max(statusWait.longestPingMs, msSince(start))
      })
      const timedStatus = Effect.gen(function* () {
        const start = process.hrtime.bigint()
        const answer = yield* Effect.either(client.ContextStatus())
        statusWait.calls++
        statusWait.longestMs = Math.max(statusWait.longestMs, msSince(start))
        if (answer._tag === "Right") return answer.right
        statusWait.unanswered++
        if (statusWait.unanswered > 10) return yield* answer.left
        return undefined
      })
      let status = yield* timedStatus
      const waitStart = process.hrtime.bigint()
      // `index --wait` follows a job for ten minutes at most: wait for the daemon to be ready too.
      while ((status === undefined || !ready(status)) && msSince(waitStart) < VECTOR_WAIT_MS) {
        yield* Effect.sleep("5 seconds")
        yield* timedPing
        status = (yield* timedStatus) ?? status
      }
      if (status === undefined) return yield* Effect.dieMessage("the daemon never answered context_status")
      const vectorWait = msSince(waitStart) / 1000
      for (const query of queries.slice(0, 10)) yield* client.Search({ query, limit: 10 })
      const times: Array<number> = []
      for (const query of queries) {
        const start = process.hrtime.bigint()
        yield* client.Search({ query, limit: 10 })
        times.push(msSince(start))
      }
      const pid = (yield* client.Ping()).pid
      return { times: sorted(times), status, vectorWait, statusWait, pid }
    })
  )

/**
 * The daemon's RSS over the last stage's index with the encoder of bge-small-en's size loaded:
 * the daemon is stopped, the stand-in's vectors are relabelled as that model's (same 384
 * dimensions; `relabel-vectors.ts`), the model is installed through the embedding_model step and
 * the daemon started again; then the same searches run, now embedding each query at real size.
 */
const rssWithRealSizeModel = async (input: {
  readonly home: string
  readonly env: NodeJS.ProcessEnv
  readonly socketPath: string
  readonly database: string
  readonly standin: ModelFolderBytes
  readonly modelDir: string
  readonly queries: ReadonlyArray<string>
  readonly k: string
}) => {
  const real = readModelFolder(input.modelDir, "blctx-bench/bge-small-shaped", STANDIN_DIMS)
  const pid = await Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: input.socketPath, timeout: "60 seconds" }), (c) => c.Ping()))
  )
  await Effect.runPromise(stopProcess(pid.pid, "30 seconds"))
  const target = fingerprintOf(specOf(real))
  relabelVectors(input.database, fingerprintOf(specOf(input.standin)), target)
  const server = await installBenchModel(cli, input.home, input.env, real)
  try {
    await run(process.execPath, [cli, "install", "codex", "--step", "service_health", "--json"], { env: input.env })
    const measured = await Effect.runPromise(
      searchThroughDaemon(
        input.socketPath,
        input.queries,
        (s) =>
          s.model_fingerprint?.endsWith(target.key) === true &&
          s.index_state === "ready" &&
          s.coverage.vectors_pending === 0 &&
          s.query_mode === "hybrid"
      )
    )
    line(
      `bge-size model over the same index (${input.k})`,
      `${measured.status.index_state}, ${measured.status.query_mode}, ${measured.status.coverage.vectors_pending} vectors pending, ready after ${measured.vectorWait.toFixed(1)} s`
    )
    line(
      `search p50 / p95, daemon, ${input.k}, bge-size query embedding included`,
      `${percentile(measured.times, 50).toFixed(2)} ms / ${percentile(measured.times, 95).toFixed(2)} ms`
    )
    const rss = rssOf(measured.pid)
    figure(`daemon RSS after the searches, ${input.k} chunks, bge-size model loaded`, rss / 1024 / 1024, "MiB", {
      goal: "< 400 MiB at 100k"
    })
  } finally {
    await server.close()
  }
}

/**
 * Search through the daemon (socket → daemon → query worker → SQLite) over a Zipf-distributed
 * synthetic history (`zipf-history.ts`) of about 10k and 100k chunks (and 1M with
 * BLCTX_BENCH_LARGE=1), with 384-dimensional vectors from a stand-in encoder generated at bench
 * time (`standin-model.ts`) and installed through the normal embedding_model step. It needs only
 * bge-small-en's tokenizer files (BLCTX_TEST_MODEL_DATA/fast-bge-small-en or
 * BLCTX_BENCH_MODEL_DIR); without them, search is lexical and only that is measured. Each
 * search's parts are timed in this process on a read-only connection with the calls the query
 * worker makes; the vector part is compared with a plain Float32Array scan of the same vectors,
 * and the vector index's top 10 with the exact top 10 (recall@10).
 */
export const run_ = async () => {
  const { home, env, socketPath, dispose } = benchHome("blctx-bench-search-")
  const codexHome = NodePath.join(home, ".codex")
  const database = NodePath.join(home, ".local", "share", "blctx", "context.db")
  const tokenizers = tokenizerDir()
  const folder = tokenizers === undefined ? undefined : standinFolder(tokenizers)
  const history = makeZipfHistory({ seed: 1 })
  const targets = [10_000, 100_000, ...(process.env[LARGE_ENV] === "1" ? [1_000_000] : [])]
  const curve: Array<StageFigures> = []
  let server: ModelServer | undefined
  try {
    if (folder !== undefined) {
      const start = process.hrtime.bigint()
      server = await installBenchModel(cli, home, env, folder)
      line("stand-in model (384 dims) installed", `${(msSince(start) / 1000).toFixed(1)} s (embedding_model step)`)
    } else {
      line(
        "vector parts",
        "skipped: no tokenizer files (set BLCTX_TEST_MODEL_DATA or BLCTX_BENCH_MODEL_DIR); lexical only"
      )
    }
    await run(process.execPath, [cli, "install", "codex", "--step", "service_health", "--json"], { env })
    if (process.env[LARGE_ENV] !== "1") line("1M chunks", `skipped (set ${LARGE_ENV}=1)`)

    let files = 0
    let lastQueries: ReadonlyArray<string> = []
    let chunksPerFile = FIRST_GUESS_CHUNKS_PER_FILE
    for (const target of targets) {
      console.log(`\n  -- about ${target / 1000}k chunks --`)
      const wanted = Math.max(files + 1, Math.ceil(target / chunksPerFile))
      const writeStart = process.hrtime.bigint()
      history.write(codexHome, wanted - files, TURNS_PER_FILE, files + 1)
      files = wanted
      line("history written", `${files} rollout files in ${(msSince(writeStart) / 1000).toFixed(1)} s`)
      const started = process.hrtime.bigint()
      await run(process.execPath, [cli, "index", "--root", codexHome, "--wait"], { env, maxBuffer: 64 * 1024 * 1024 })
      const indexSeconds = msSince(started) / 1000
      const queries = history.queries(QUERIES, files, target)
      lastQueries = queries
      const measured = await Effect.runPromise(
        searchThroughDaemon(
          socketPath,
          queries,
          // Every chunk with a vector (and the daemon searching hybrid) when a model is installed.
          (status) =>
            status.index_state !== "indexing" &&
            status.index_state !== "repairing" &&
            (folder === undefined || (status.coverage.vectors_pending === 0 && status.query_mode === "hybrid"))
        )
      )
      // The import job's own duration, from its timestamps (the newest import).
      const job = measured.status.recent_jobs.find((j) => j.kind === "import" && j.finished_at !== null)
      const jobSeconds =
        job?.started_at && job.finished_at
          ? (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000
          : Number.NaN
      const chunks = measured.status.coverage.chunks
      chunksPerFile = Math.max(1, chunks / files)
      const k = chunks >= 1e6 ? `${(chunks / 1e6).toFixed(2)}M` : `${Math.round(chunks / 1000)}k`
      line("chunks indexed", `${chunks} (${chunksPerFile.toFixed(0)} per file)`)
      line(
        "indexing: index --wait, then until ready",
        `${indexSeconds.toFixed(1)} s + ${measured.vectorWait.toFixed(1)} s (import job ${jobSeconds.toFixed(1)} s; ${measured.status.index_state}, ${measured.status.query_mode}, ${measured.status.coverage.vectors_pending} vectors pending)`
      )
      line(
        "context_status while waiting for the index",
        `${measured.statusWait.calls} calls, longest answer ${(measured.statusWait.longestMs / 1000).toFixed(1)} s, ${measured.statusWait.unanswered} unanswered within 60 s; longest ping ${(measured.statusWait.longestPingMs / 1000).toFixed(1)} s`
      )
      const p50 = percentile(measured.times, 50)
      const p95 = percentile(measured.times, 95)
      line(
        `search p50 / p95, daemon, ${k} (${measured.status.query_mode})`,
        `${p50.toFixed(2)} ms / ${p95.toFixed(2)} ms over ${QUERIES} queries`
      )
      figure(`search p50, daemon, ${k} chunks (${measured.status.query_mode})`, p50, "ms", { goal: "< 50 ms at 100k" })
      figure(`search p95, daemon, ${k} chunks (${measured.status.query_mode})`, p95, "ms", { goal: "< 100 ms at 100k" })
      const rss = rssOf(measured.pid)
      figure(`daemon RSS after the searches, ${k} chunks`, rss / 1024 / 1024, "MiB", { goal: "< 400 MiB at 100k" })

      const parts = await Effect.runPromise(
        measureParts(database, queries, folder && tokenizers ? { folder, tokenizers } : undefined)
      )
      const named: Array<[string, Array<number>]> = [
        ["embedding the query (stand-in)", parts.times.embed],
        [
          parts.exact === undefined ? "lexical (BM25, first page)" : "lexical (BM25, 50 candidates)",
          parts.times.lexical
        ],
        [`vector index (${VECTOR_CANDIDATES} candidates)`, parts.times.vector],
        ["fusion (scaled scores)", parts.times.fusion],
        ["hydration (rows of vector hits, hits, budget)", parts.times.hydration]
      ]
      const total = named.reduce((sum, [, xs]) => sum + mean(xs), 0)
      console.log(`  parts, in this process (mean, share of the sum, p50 / p95):`)
      for (const [name, xs] of named) {
        if (xs.length === 0) {
          line(`  ${name}`, "skipped (no model: lexical only)")
          continue
        }
        line(
          `  ${name}`,
          `${mean(xs).toFixed(2)} ms  ${((100 * mean(xs)) / total).toFixed(0).padStart(3)}%  ${p50p95(xs)}`
        )
      }
      line("  lexical narrowed to a tenth of the history's time (first page, apart)", p50p95(parts.times.narrowed))
      if ("whole" in parts.times) {
        line("  the worker's read (search.ts), vector hits given", p50p95(parts.times.whole))
        line(`  the same with ${MAX_REPHRASINGS} rephrasings`, p50p95(parts.times.rephrased))
      }

      let vectorP50: number | null = null
      let scanP50: number | null = null
      let recall: number | null = null
      if (parts.exact !== undefined) {
        const { scan, knn, vectors, firstSearch } = parts.exact
        line("first vector search on a new connection (loads)", `${firstSearch.toFixed(0)} ms`)
        vectorP50 = percentile(sorted(parts.times.vector), 50)
        scanP50 = percentile(sorted(scan), 50)
        recall = parts.exact.recall
        line(`plain Float32Array scan top-10 (${vectors} x ${STANDIN_DIMS})`, p50p95(scan))
        line("vector index top-10", p50p95(knn))
        figure(`vector part p50 (top-${VECTOR_CANDIDATES}), ${k} chunks`, vectorP50, "ms", {
          reference: { name: "plain Float32Array scan p50", value: scanP50 },
          goal: "<= 1.5x a plain scan"
        })
        figure(`recall@10 of the vector index vs exact, ${k} chunks`, recall, "", { goal: ">= 0.98" })
      }
      curve.push({
        chunks,
        indexSeconds: indexSeconds + measured.vectorWait,
        mode: measured.status.query_mode,
        p50,
        p95,
        vectorP50,
        scanP50,
        recall,
        rss
      })
    }

    const modelDir = benchModelDir()
    const last = curve[curve.length - 1]
    if (modelDir === undefined || folder === undefined || last === undefined) {
      line("daemon RSS with the bge-size model loaded", `skipped (set ${BENCH_MODEL_ENV} to an encoder of that size)`)
    } else if (last.chunks > 200_000) {
      // Its goal is at 100k; relabelling a million vectors and loading them again adds a long wait.
      line("daemon RSS with the bge-size model loaded", `measured at 100k, in a run without ${LARGE_ENV}`)
    } else {
      const k = last.chunks >= 1e6 ? `${(last.chunks / 1e6).toFixed(2)}M` : `${Math.round(last.chunks / 1000)}k`
      await rssWithRealSizeModel({
        home,
        env,
        socketPath,
        database,
        standin: folder,
        modelDir,
        queries: lastQueries,
        k
      })
    }
    if (modelDir === undefined) {
      line("query embedding, bge-small-en size", `skipped (set ${BENCH_MODEL_ENV} to an encoder of that size)`)
    } else {
      const times = sorted(await realSizeQueryEmbedding(modelDir, history.queries(QUERIES, files, 99)))
      line(
        `query embedding p50 / p95, bge-small-en size`,
        `${p50p95(times)} (${QUERIES} generated queries, in process)`
      )
      figure("query embedding p50, bge-small-en size", percentile(times, 50), "ms")
    }

    console.log("\n  cost curve")
    console.log(
      `  ${"chunks".padStart(9)} ${"index s".padStart(8)} ${"mode".padStart(7)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)} ${"knn ms".padStart(8)} ${"scan ms".padStart(8)} ${"rec@10".padStart(7)} ${"RSS MiB".padStart(8)}`
    )
    for (const c of curve) {
      const f = (x: number | null, d = 2) => (x === null ? "-" : x.toFixed(d))
      console.log(
        `  ${String(c.chunks).padStart(9)} ${c.indexSeconds.toFixed(1).padStart(8)} ${c.mode.padStart(7)} ${c.p50.toFixed(2).padStart(8)} ${c.p95.toFixed(2).padStart(8)} ${f(c.vectorP50).padStart(8)} ${f(c.scanP50).padStart(8)} ${f(c.recall, 3).padStart(7)} ${(c.rss / 1024 / 1024).toFixed(0).padStart(8)}`
      )
    }
  } catch (error) {
    // The home goes with the run: keep what the daemon said last.
    const tail = daemonLogTail(home)
    console.log(`\n  the run failed; the daemon log's last lines:\n${tail}`)
    throw error
  } finally {
    await run(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    await server?.close()
    dispose()
  }
}
export { run_ as run }
