import { execFile, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { stopProcess } from "../layers/daemon-process-table.js"
import { connect } from "../src/rpc/client.js"
import { benchHome, figure, line, percentile, rssOf } from "./measure.js"

const run = promisify(execFile)
const cli = NodePath.join(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "programs", "cli.js")

const STARTS = 7

/**
 * Milliseconds from launching blctxd with its installation's own command to its "blctxd ready"
 * line (socket bound, after the checks, the lock, the database and the query workers), then a
 * SIGTERM and its exit; STARTS times.
 */
const startTimes = async (launchRecord: string) => {
  const [node, ...args] = (JSON.parse(readFileSync(launchRecord, "utf8")) as { command: Array<string> }).command
  const times: Array<number> = []
  for (let i = 0; i < STARTS; i++) {
    const started = performance.now()
    const daemon = spawn(node as string, args, { stdio: ["ignore", "ignore", "pipe"] })
    const exited = new Promise((resolve) => daemon.once("exit", resolve))
    await new Promise<void>((resolve, reject) => {
      let log = ""
      daemon.stderr.on("data", (chunk: Buffer) => {
        log += chunk.toString()
        if (log.includes('"blctxd ready"')) resolve()
      })
      daemon.once("exit", () => reject(new Error(`blctxd exited before it was ready: ${log.slice(-2000)}`)))
    })
    times.push(performance.now() - started)
    daemon.kill("SIGTERM")
    await exited
  }
  return times.sort((a, b) => a - b)
}

/**
 * blctxd under the detached supervisor in a temporary home: `Ping` round trips over the Unix
 * socket (one connection, sequential calls), the daemon's resident memory when idle, and how long
 * it takes to start.
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
    await Effect.runPromise(stopProcess(pid, "5 seconds"))
    const starts = await startTimes(NodePath.join(NodePath.dirname(socketPath), "blctxd.launch.json"))
    line(
      `daemon start to ready, min / median / max (${STARTS} starts)`,
      starts
        .map((t) => `${t.toFixed(0)} ms`)
        .filter((_, i) => i === 0 || i === 3 || i === STARTS - 1)
        .join(" / ")
    )
    figure("daemon start to ready, median (empty index, no model)", percentile(starts, 50), "ms")
  } finally {
    await run(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
}
