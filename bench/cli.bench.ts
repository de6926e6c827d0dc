import { execFile, spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Effect } from "effect"
import { connect } from "../src/rpc/client.js"
import { codexBin, EVENTS, type EventName, payload, registeredCommands, timeCommand } from "./hooks.bench.js"
import { benchHome, figure, line, percentile, timeMany } from "./measure.js"
import { runStatusBench } from "./status.bench.js"
import { writeSyntheticHistory } from "./synthetic-history.js"

const exec = promisify(execFile)
const here = NodePath.dirname(fileURLToPath(import.meta.url))
/** The bundled CLI, as a person runs it (`blctx` is this file). */
const blctx = NodePath.join(here, "..", "bin", "blctx.mjs")

const RUNS = 20
/** `status` takes seconds: a few runs say enough. */
const STATUS_RUNS = 3
const QUERY = "deploy rollout migration"

/**
 * One whole process, as a shell runs it; resolves its wall time in milliseconds. Only `okCodes`
 * count as a run (`status` exits 1 while a step is not ready, and is timed all the same).
 */
const timeProcess = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, okCodes: ReadonlyArray<number> = [0]) =>
  new Promise<number>((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "ignore"] })
    child.on("error", reject)
    child.on("close", (code) =>
      code !== null && okCodes.includes(code)
        ? resolve(Number(process.hrtime.bigint() - start) / 1e6)
        : reject(new Error(`${args.join(" ")} exited ${code}`))
    )
  })

const p = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((x, y) => x - y)
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) }
}
const ms = (f: { readonly p50: number; readonly p95: number }) => `${f.p50.toFixed(0)} ms / ${f.p95.toFixed(0)} ms`

/** The search command lines a person types, each timed as a whole process in the same rounds. */
const SEARCHES = {
  json: ["search", QUERY, "--limit", "5", "--json"],
  pretty: ["search", QUERY, "--limit", "5", "--pretty"],
  separator: ["search", "--limit", "5", "--", QUERY]
} as const

/**
 * How fast the CLI starts, against a bare `node -e ""` measured in the same rounds: `--version`
 * (goal: within 2x a bare start); `search` as JSON, readable (`--pretty`, what a terminal gets) and
 * with `--` (the readable and `--` forms within 1.5x the JSON one: all three take the fast path);
 * `search` through the daemon (goal: a bare start + 100 ms + the daemon's own search time); `status`
 * of every agent (goal: under 5 s); and each hook handler as Codex runs it (Stop within 1.5x a bare
 * start, the prompt hook within a bare start + 150 ms).
 */
export const run = async () => {
  const { home, env: base, socketPath, dispose } = benchHome("blctx-bench-cli-")
  const env = { ...base, PATH: `${codexBin}:${base.PATH ?? ""}`, COLUMNS: "80" }
  const codexHome = NodePath.join(home, ".codex")
  try {
    await exec(process.execPath, [blctx, "install", "codex", "--step", "background_service", "--json"], { env })
    const history = writeSyntheticHistory(NodePath.join(home, "history"), 10, 40)
    await exec(process.execPath, [blctx, "index", ...history, "--wait"], { env, maxBuffer: 16 * 1024 * 1024 })
    mkdirSync(codexHome, { recursive: true, mode: 0o700 })
    await exec(process.execPath, [blctx, "install", "codex", "--step", "codex_hooks", "--hooks", "--json"], { env })
    const hooks = registeredCommands(codexHome)

    const bare: Array<number> = []
    const version: Array<number> = []
    const search: Record<keyof typeof SEARCHES, Array<number>> = { json: [], pretty: [], separator: [] }
    const bareShell: Array<number> = []
    const hook = new Map<EventName, Array<number>>(EVENTS.map((e) => [e, []]))
    for (let round = 0; round < RUNS; round++) {
      bare.push(await timeProcess(["-e", ""], env))
      version.push(await timeProcess([blctx, "--version"], env))
      for (const [name, args] of Object.entries(SEARCHES)) {
        search[name as keyof typeof SEARCHES].push(await timeProcess([blctx, ...args], env))
      }
      // Hooks run through `sh -c`, as Codex runs them: so is their bare reference.
      bareShell.push((await timeCommand(`${process.execPath} -e ""`, "", env)).ms)
      for (const event of EVENTS) {
        const result = await timeCommand(hooks[event], payload(event, codexHome, round), env)
        if (result.code !== 0) throw new Error(`the ${event} hook exited ${result.code}`)
        hook.get(event)?.push(result.ms)
      }
    }
    const status: Array<number> = []
    for (let round = 0; round < STATUS_RUNS; round++) {
      status.push(await timeProcess([blctx, "status", "--json"], env, [0, 1]))
    }
    const daemon = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(connect({ socketPath, timeout: "30 seconds" }), (client) =>
          Effect.promise(() => timeMany(RUNS, () => Effect.runPromise(client.Search({ query: QUERY, limit: 5 }))))
        )
      )
    )

    const b = p(bare)
    const v = p(version)
    const d = p(daemon)
    const json = p(search.json)
    line(`bare node -e "" p50 / p95 (${RUNS} runs)`, ms(b))
    line("blctx --version p50 / p95", ms(v))
    figure("blctx --version p50", v.p50, "ms", {
      reference: { name: 'bare node -e ""', value: b.p50 },
      goal: "<= 2x bare node"
    })
    line("daemon's own search p50 / p95 (open connection)", `${d.p50.toFixed(1)} ms / ${d.p95.toFixed(1)} ms`)
    for (const [name, times] of Object.entries(search))
      line(`blctx ${SEARCHES[name as keyof typeof SEARCHES].join(" ")}`, ms(p(times)))
    figure("blctx search --json p50", json.p50, "ms", {
      reference: { name: "bare node + daemon search", value: b.p50 + d.p50 },
      goal: "<= bare node + daemon search + 100 ms"
    })
    figure("blctx search --json p50 over bare node + daemon search", json.p50 - b.p50 - d.p50, "ms", {
      goal: "<= 100 ms"
    })
    figure("blctx search --pretty p50", p(search.pretty).p50, "ms", {
      reference: { name: "search --json p50", value: json.p50 },
      goal: "<= 1.5x search --json"
    })
    figure("blctx search --limit 5 -- QUERY p50", p(search.separator).p50, "ms", {
      reference: { name: "search --json p50", value: json.p50 },
      goal: "<= 1.5x search --json"
    })
    const s = p(status)
    line(
      `blctx status (every agent) p50 / max (${STATUS_RUNS} runs)`,
      `${s.p50.toFixed(0)} ms / ${Math.max(...status).toFixed(0)} ms`
    )
    figure("blctx status (every agent) p50", s.p50, "ms", { goal: "< 5000 ms" })

    const bs = p(bareShell)
    line(`bare node through sh -c p50 / p95 (${RUNS} runs)`, ms(bs))
    for (const event of EVENTS) {
      const h = p(hook.get(event) ?? [])
      line(`hook ${event} p50 / p95`, ms(h))
      if (event === "UserPromptSubmit") {
        figure("hook UserPromptSubmit p95 over bare node p95", h.p95 - bs.p95, "ms", { goal: "<= +150 ms" })
      } else {
        figure(`hook ${event} p50`, h.p50, "ms", {
          reference: { name: "bare node p50", value: bs.p50 },
          ...(event === "Stop" ? { goal: "<= 1.5x bare node" } : {})
        })
        if (event === "Stop") {
          figure("hook Stop p95", h.p95, "ms", {
            reference: { name: "bare node p95", value: bs.p95 },
            goal: "<= 1.5x bare node"
          })
        }
      }
    }
  } finally {
    await exec(process.execPath, [blctx, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
  // `blctx status` for both agents, in its own home (bench/status.bench.ts).
  await runStatusBench()
}
