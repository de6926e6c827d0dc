import { execFile } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { makeFakeEmbedder } from "../layers/fake-model.js"
import {
  TINY_REPO,
  TINY_REVISION,
  testModelData,
  tinyModelBytes,
  tinyModelConfig
} from "../layers/model-test-folder.js"
import { type ModelServer, startModelServer } from "../layers/model-test-server.js"
import { connect } from "../src/rpc/client.js"
import { benchHome, line, mib, percentile, rssOf } from "./measure.js"
import { rng, writeSyntheticHistory } from "./synthetic-history.js"

const run = promisify(execFile)
const require = createRequire(import.meta.url)
const cli = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "bin", "blctx.mjs")
const TURNS_PER_FILE = 100
const QUERIES = 200
const WORDS = [
  "deploy",
  "rollout",
  "migration",
  "daemon socket",
  "vector index",
  "token budget",
  "writer lock",
  "cache model"
]

interface Db {
  prepare(sql: string): { all(): Array<Record<string, unknown>> }
  close(): void
}
const Database = require("better-sqlite3") as new (file: string, options: { readonly readonly: boolean }) => Db
const { load: loadVec } = require("sqlite-vec") as { load: (db: Db) => void }

/** Every stored vector, read back from sqlite-vec, for the plain-scan baseline. */
const storedVectors = (database: string) => {
  const db = new Database(database, { readonly: true })
  try {
    loadVec(db)
    const table = db.prepare("SELECT table_name FROM vec_collections").all()[0]?.table_name
    if (table === undefined) return []
    return db
      .prepare(`SELECT embedding FROM ${String(table)}`)
      .all()
      .map((r) => {
        const b = r.embedding as Buffer
        return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)
      })
  } finally {
    db.close()
  }
}

/** Brute-force top-10 by dot product (vectors are unit length), the baseline KNN has to beat. */
const scanTop10 = (vectors: ReadonlyArray<Float32Array>, query: Float32Array) => {
  const best: Array<number> = []
  for (const v of vectors) {
    let dot = 0
    for (let i = 0; i < v.length; i++) dot += (v[i] ?? 0) * (query[i] ?? 0)
    if (best.length < 10 || dot > (best[best.length - 1] ?? -2)) {
      best.push(dot)
      best.sort((a, b) => b - a)
      if (best.length > 10) best.pop()
    }
  }
  return best
}

/**
 * Search through the daemon (socket → daemon → query worker → SQLite) over synthetic histories of
 * about 10k and 100k chunks. With BLCTX_TEST_MODEL_DATA the tiny model is installed from a
 * loopback server and searches are hybrid (BM25 + sqlite-vec KNN, fused); its 8-dimensional
 * vectors make KNN far cheaper than bge-small-en's 384 (see the `embedding` bench for KNN at 384).
 * Without it, searches are lexical. The ratio compares with a plain Float32Array scan of the
 * same stored vectors in this process.
 */
export const run_ = async () => {
  const { home, env, socketPath, dispose } = benchHome("blctx-bench-search-")
  const codexHome = NodePath.join(home, ".codex")
  const data = testModelData()
  let server: ModelServer | undefined
  try {
    if (data !== undefined) {
      server = await startModelServer({ repo: TINY_REPO, revision: TINY_REVISION, files: tinyModelBytes(data) })
      const configDir = NodePath.join(home, ".config", "blctx")
      mkdirSync(configDir, { recursive: true, mode: 0o700 })
      writeFileSync(NodePath.join(configDir, "config.json"), JSON.stringify(tinyModelConfig(data, server.endpoint)))
      await run(process.execPath, [cli, "install", "codex", "--step", "embedding_model", "--json"], { env })
    }
    await run(process.execPath, [cli, "install", "codex", "--step", "service_health", "--json"], { env })
    let files = 0
    for (const target of [10_000, 100_000]) {
      // Three messages (one chunk each) per turn.
      const wanted = Math.ceil(target / (3 * TURNS_PER_FILE))
      writeSyntheticHistory(codexHome, wanted - files, TURNS_PER_FILE, 11 + files, files + 1)
      files = wanted
      const started = process.hrtime.bigint()
      await run(process.execPath, [cli, "index", "--root", codexHome, "--wait"], { env, maxBuffer: 64 * 1024 * 1024 })
      const indexSeconds = Number(process.hrtime.bigint() - started) / 1e9
      const next = rng(target)
      const queries = Array.from({ length: QUERIES }, () => WORDS[Math.floor(next() * WORDS.length)] ?? "deploy")
      const measured = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const client = yield* connect({ socketPath, timeout: "60 seconds" })
            const status = yield* client.contextStatus()
            const times: Array<number> = []
            for (const query of queries) {
              const start = process.hrtime.bigint()
              yield* client.search({ query, limit: 10 })
              times.push(Number(process.hrtime.bigint() - start) / 1e6)
            }
            const pid = (yield* client.ping()).pid
            return { times: times.sort((a, b) => a - b), chunks: status.coverage.chunks, mode: status.query_mode, pid }
          })
        )
      )
      const k = Math.round(measured.chunks / 1000)
      line(`chunks indexed`, `${measured.chunks} (indexing took ${indexSeconds.toFixed(1)} s through the CLI)`)
      const p50 = percentile(measured.times, 50)
      line(
        `search p50 / p95 at ${k}k chunks (${measured.mode})`,
        `${p50.toFixed(2)} ms / ${percentile(measured.times, 95).toFixed(2)} ms`
      )
      const vectors = storedVectors(NodePath.join(home, ".local", "share", "blctx", "context.db"))
      if (vectors.length > 0) {
        const embedder = makeFakeEmbedder().embedder
        const dims = vectors[0]?.length ?? 0
        const scanTimes: Array<number> = []
        for (const query of queries) {
          const [v] = Effect.runSync(embedder.embed([query], "query"))
          const q = new Float32Array(dims).map((_, i) => v?.[i] ?? 0)
          const start = process.hrtime.bigint()
          scanTop10(vectors, q)
          scanTimes.push(Number(process.hrtime.bigint() - start) / 1e6)
        }
        scanTimes.sort((a, b) => a - b)
        const scan = percentile(scanTimes, 50)
        line(`plain Float32Array scan p50 (${vectors.length} × ${dims})`, `${scan.toFixed(2)} ms`)
        line("ratio: search through the daemon / plain scan", `${(p50 / scan).toFixed(1)}x`)
      } else {
        line("plain scan ratio", "no vectors (set BLCTX_TEST_MODEL_DATA for hybrid search)")
      }
      line(`daemon RSS at ${k}k chunks`, mib(rssOf(measured.pid)))
    }
  } finally {
    await run(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    await server?.close()
    dispose()
  }
}
export { run_ as run }
