import { execFile } from "node:child_process"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { connect } from "../src/rpc/client.js"
import { benchHome, figure, line, percentile, rssOf } from "./measure.js"

const run = promisify(execFile)
const cli = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "programs", "cli.js")

/**
 * blctxd under the detached supervisor in a temporary home: `Ping` round trips over the Unix
 * socket (one connection, sequential calls), and the daemon's resident memory when idle.
 */
export const runDaemonBench = async () => {
  const { env, socketPath, dispose } = benchHome("blctx-bench-")
  try {
    await run(process.execPath, [cli, "install", "codex", "--step", "background_service", "--json"], { env })
    const { times, pid } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* connect({ socketPath, timeout: "5 seconds" })
          for (let i = 0; i < 100; i++) yield* client.Ping()
          const times: Array<number> = []
          let pid = 0
          for (let i = 0; i < 1_000; i++) {
            const start = process.hrtime.bigint()
            pid = (yield* client.Ping()).pid
            times.push(Number(process.hrtime.bigint() - start) / 1e6)
          }
          return { times: times.sort((a, b) => a - b), pid }
        })
      )
    )
    line(
      "Ping round trip p50 / p95 (1000 calls)",
      `${percentile(times, 50).toFixed(2)} ms / ${percentile(times, 95).toFixed(2)} ms`
    )
    await new Promise((r) => setTimeout(r, 2_000))
    figure("daemon idle RSS (empty index, no model, 1 query worker)", rssOf(pid) / 1024 / 1024, "MiB")
  } finally {
    await run(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
}
