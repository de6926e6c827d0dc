import { execFile } from "node:child_process"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { connect } from "../src/rpc/client.js"
import { benchHome, line, mib, percentile, rssOf } from "./measure.js"
import { rng, writeSyntheticHistory } from "./synthetic-history.js"

const run = promisify(execFile)
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

/**
 * Search through the daemon (CLI → socket → daemon → query worker → SQLite) over a synthetic
 * history of about 10k and then 100k chunks, without a model: lexical (BM25) answers, so no
 * model time is included. Vector KNN on its own is measured by the `embedding` benchmark.
 */
export const run_ = async () => {
  const { home, env, socketPath, dispose } = benchHome("blctx-bench-search-")
  const codexHome = NodePath.join(home, ".codex")
  try {
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
      const measured = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const client = yield* connect({ socketPath, timeout: "30 seconds" })
            const status = yield* client.contextStatus()
            const times: Array<number> = []
            for (let i = 0; i < QUERIES; i++) {
              const query = WORDS[Math.floor(next() * WORDS.length)] ?? "deploy"
              const start = process.hrtime.bigint()
              yield* client.search({ query, limit: 10 })
              times.push(Number(process.hrtime.bigint() - start) / 1e6)
            }
            const pid = (yield* client.ping()).pid
            return { times: times.sort((a, b) => a - b), chunks: status.coverage.chunks, mode: status.query_mode, pid }
          })
        )
      )
      line(`chunks indexed`, `${measured.chunks} (indexing took ${indexSeconds.toFixed(1)} s through the CLI)`)
      line(
        `search p50 / p95 at ${Math.round(measured.chunks / 1000)}k chunks (${measured.mode})`,
        `${percentile(measured.times, 50).toFixed(2)} ms / ${percentile(measured.times, 95).toFixed(2)} ms`
      )
      line(`daemon RSS at ${Math.round(measured.chunks / 1000)}k chunks`, mib(rssOf(measured.pid)))
    }
  } finally {
    await run(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
}
export { run_ as run }
