import { execFile, spawn } from "node:child_process"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { connect } from "../src/rpc/client.js"
import { benchHome, figure, line, percentile, timeMany } from "./measure.js"
import { runStatusBench } from "./status.bench.js"
import { writeSyntheticHistory } from "./synthetic-history.js"

const exec = promisify(execFile)
const here = NodePath.dirname(fileURLToPath(import.meta.url))
/** The bundled CLI, as a person runs it (`blctx` is this file). */
const blctx = NodePath.join(here, "..", "bin", "blctx.mjs")

const RUNS = 20
const QUERY = "deploy rollout migration"

/** One whole process, as a shell runs it; resolves its wall time in milliseconds. */
const timeProcess = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<number>((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "ignore"] })
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0
        ? resolve(Number(process.hrtime.bigint() - start) / 1e6)
        : reject(new Error(`${args.join(" ")} exited ${code}`))
    )
  })

const p = (sorted: ReadonlyArray<number>) => ({ p50: percentile(sorted, 50), p95: percentile(sorted, 95) })

/**
 * How fast the CLI starts, against a bare `node -e ""` measured in the same rounds: `--version`
 * (goal: within 2x a bare start) and a `search` through the daemon (goal: a bare start + 100 ms +
 * the daemon's own search time, measured by the same query over an open connection).
 */
export const run = async () => {
  const { home, env, socketPath, dispose } = benchHome("blctx-bench-cli-")
  try {
    await exec(process.execPath, [blctx, "install", "codex", "--step", "background_service", "--json"], { env })
    const history = writeSyntheticHistory(NodePath.join(home, "history"), 10, 40)
    await exec(process.execPath, [blctx, "index", ...history, "--wait"], { env, maxBuffer: 16 * 1024 * 1024 })

    const bare: Array<number> = []
    const version: Array<number> = []
    const search: Array<number> = []
    for (let round = 0; round < RUNS; round++) {
      bare.push(await timeProcess(["-e", ""], env))
      version.push(await timeProcess([blctx, "--version"], env))
      search.push(await timeProcess([blctx, "search", QUERY, "--limit", "5"], env))
    }
    const daemon = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(connect({ socketPath, timeout: "30 seconds" }), (client) =>
          Effect.promise(() => timeMany(RUNS, () => Effect.runPromise(client.search({ query: QUERY, limit: 5 }))))
        )
      )
    )
    const b = p([...bare].sort((x, y) => x - y))
    const v = p([...version].sort((x, y) => x - y))
    const s = p([...search].sort((x, y) => x - y))
    const d = p(daemon)
    line(`bare node -e "" p50 / p95 (${RUNS} runs)`, `${b.p50.toFixed(0)} ms / ${b.p95.toFixed(0)} ms`)
    line("blctx --version p50 / p95", `${v.p50.toFixed(0)} ms / ${v.p95.toFixed(0)} ms`)
    figure("blctx --version p50", v.p50, "ms", {
      reference: { name: 'bare node -e ""', value: b.p50 },
      goal: "<= 2x bare node"
    })
    line("daemon's own search p50 / p95 (open connection)", `${d.p50.toFixed(1)} ms / ${d.p95.toFixed(1)} ms`)
    line("blctx search p50 / p95", `${s.p50.toFixed(0)} ms / ${s.p95.toFixed(0)} ms`)
    figure("blctx search p50", s.p50, "ms", {
      reference: { name: "bare node + daemon search", value: b.p50 + d.p50 },
      goal: "<= bare node + daemon search + 100 ms"
    })
    figure("blctx search p50 over bare node + daemon search", s.p50 - b.p50 - d.p50, "ms", { goal: "<= 100 ms" })
  } finally {
    await exec(process.execPath, [blctx, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
  // `blctx status` for both agents, in its own home (bench/status.bench.ts).
  await runStatusBench()
}
