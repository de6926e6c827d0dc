import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { bundledProgram, type RunResult, runProcess } from "./support/isolated-home.js"

/**
 * `blctx search` on the effect-free fast path (src/cli/fast-search.ts) against a real daemon, next
 * to the full CLI. The full path is `runCli` exactly as programs/cli.ts calls it when the fast path
 * declines, started from a small script, so the two differ only in the path taken. Which path a
 * run took is read from the process itself: a preloaded module records at exit whether `effect`
 * was loaded (effect keeps its global store on `globalThis["effect/GlobalValue"]`).
 */

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const fixture = (name: string) => NodePath.join(root, "fixtures", "history", name)

let h: DaemonHome
let traceModule: string
let fullCli: string
let runs = 0

interface Run extends RunResult {
  readonly effectLoaded: boolean
}

/** The home's environment, without a COLUMNS of the caller's, plus `extra`. */
const envWith = (extra: NodeJS.ProcessEnv) => {
  const { COLUMNS: _columns, NO_COLOR: _noColor, ...env } = h.env
  return { ...env, ...extra }
}

/** Runs `node --import <trace> <program> ...args` in the home; says whether effect was loaded. */
const run = async (program: string, args: ReadonlyArray<string>, extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> => {
  const trace = NodePath.join(h.home, `trace-${runs++}`)
  const result = await runProcess(process.execPath, ["--import", pathToFileURL(traceModule).href, program, ...args], {
    env: envWith({ ...extraEnv, BLCTX_TEST_EFFECT_TRACE: trace })
  })
  return { ...result, effectLoaded: Fs.readFileSync(trace, "utf8") === "true" }
}
const fast = (args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) => run(bundledProgram("blctx"), args, env)
const full = (args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) => run(fullCli, args, env)

const shellQuote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`

/**
 * The same run at a pseudo-terminal of `columns` columns (util-linux `script`), with no COLUMNS in
 * the environment: stdout is a TTY whose width only the terminal knows. Returns what the terminal
 * received (its line ends are CR LF).
 */
const atTerminal = (program: string, args: ReadonlyArray<string>, columns: number): Promise<Run> =>
  new Promise((resolve, reject) => {
    const trace = NodePath.join(h.home, `trace-${runs++}`)
    const node = [process.execPath, "--import", pathToFileURL(traceModule).href, program, ...args]
    const command = `stty cols ${columns} rows 50; exec ${node.map(shellQuote).join(" ")}`
    const child = spawn("script", ["--quiet", "--return", "--command", command, "/dev/null"], {
      env: envWith({ BLCTX_TEST_EFFECT_TRACE: trace }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    child.on("error", reject)
    child.on("close", (code) =>
      resolve({ code, stdout, stderr, effectLoaded: Fs.readFileSync(trace, "utf8") === "true" })
    )
  })

beforeAll(async () => {
  h = makeDaemonHome("detached")
  traceModule = NodePath.join(h.home, "trace-effect.mjs")
  Fs.writeFileSync(
    traceModule,
    `import { writeFileSync } from "node:fs"
process.on("exit", () => writeFileSync(process.env.BLCTX_TEST_EFFECT_TRACE, String("effect/GlobalValue" in globalThis)))
`
  )
  fullCli = NodePath.join(h.home, "full-cli.mjs")
  const dist = (path: string) => pathToFileURL(NodePath.join(root, "dist", path)).href
  Fs.writeFileSync(
    fullCli,
    `const [{ ServiceManagerLive }, { runCli }] = await Promise.all([
  import(${JSON.stringify(dist("layers/supervisor-selection.js"))}),
  import(${JSON.stringify(dist("programs/cli-main.js"))})
])
runCli({ entryUrl: ${JSON.stringify(dist("programs/cli.js"))}, serviceManager: ServiceManagerLive })
`
  )
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  const dir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
  Fs.mkdirSync(dir, { recursive: true })
  const files = ["session-1.jsonl", "session-2.jsonl"].map((name) => {
    const target = NodePath.join(dir, `rollout-2026-02-02T09-00-00-${name}`)
    Fs.copyFileSync(fixture(name), target)
    return target
  })
  const index = await h.blctx(["index", ...files, "--wait", "--json"])
  expect(index.code, index.stdout + index.stderr).toBe(0)
})

afterAll(() => h?.dispose())

describe("blctx search on the fast path", () => {
  // The comparisons only read the shared home: they run side by side (the test that kills the
  // daemon is not concurrent, so it runs after them).
  it.concurrent.each([
    [["search", "blue-green", "rollout"]],
    [["search", "rollout", "--limit", "2", "--offset", "1"]],
    [["--json", "search", "deploy", "--agent", "codex", "--no-color", "--limit", "3", "staging"]],
    [["search", "rollout", "--source-type", "codex_transcript", "--since", "2020-01-01", "--until", "2030-01-01"]],
    [["search", "rollout", "--project", "/nowhere/at/all"]],
    [["search", "zzzz-no-such-word-anywhere"]],
    // A date phrase: the answer carries time_filter, which the fast path's schema must accept.
    [["search", "rollout", "in", "February"]],
    // A synonym searched (stash -> cache): the answer carries synonyms_searched, likewise.
    [["search", "stash"]]
  ])("%j prints byte for byte what the full CLI prints, without loading effect", async (args) => {
    const [quick, slow] = [await fast(args), await full(args)]
    expect(slow.effectLoaded).toBe(true)
    expect(slow.code, slow.stderr).toBe(0)
    expect(quick.effectLoaded, quick.stderr).toBe(false)
    expect(quick.code).toBe(0)
    expect(quick.stderr).toBe("")
    expect(quick.stdout).toBe(slow.stdout)
    expect(JSON.parse(quick.stdout)).toMatchObject({ query: expect.any(String), results: expect.any(Array) })
  })

  it("names the synonyms a search also searched", async () => {
    const answer = await fast(["search", "stash"])
    expect(answer.effectLoaded, answer.stderr).toBe(false)
    expect(JSON.parse(answer.stdout)).toMatchObject({ query: "stash", synonyms_searched: ["cache"] })
  })

  const readable: ReadonlyArray<ReadonlyArray<string>> = [
    ["search", "blue-green", "rollout", "--pretty"],
    ["search", "--pretty", "deploy", "--limit", "4", "--no-color", "--agent", "codex"],
    ["search", "--limit", "3", "--pretty", "--", "--deploy", "--offset", "staging"],
    ["search", "zzzz-no-such-word-anywhere", "--pretty"],
    ["search", "--limit", "5", "--", "--rollout"],
    ["--json", "search", "rollout", "--pretty", "--", "--json"],
    ["search", "deploy", "last", "week", "--pretty"],
    ["search", "stash", "--pretty"]
  ]
  it.concurrent.each(readable.flatMap((args) => [80, 200].map((columns) => [args, columns] as const)))(
    "%j at COLUMNS=%i: the full CLI's bytes, without loading effect",
    async (args, columns) => {
      const env = { COLUMNS: String(columns) }
      const [quick, slow] = await Promise.all([fast(args, env), full(args, env)])
      expect(slow.effectLoaded).toBe(true)
      expect(slow.code, slow.stderr).toBe(0)
      expect(quick.effectLoaded, quick.stderr).toBe(false)
      expect(quick.code).toBe(0)
      expect(quick.stderr).toBe("")
      expect(quick.stdout).toBe(slow.stdout)
      if (args.includes("--pretty") && !args.includes("--json")) {
        expect(quick.stdout).toMatch(/^\d+ results for "/)
        for (const line of quick.stdout.split("\n")) {
          // Only a token wider than the terminal (a transcript path) may stand alone past it.
          if (line.length > columns) expect(line.trim().split(/\s+/), line).toHaveLength(1)
        }
      }
    }
  )

  it.concurrent.each([80, 200])(
    "at a %i-column terminal, the readable default in color: the full CLI's bytes",
    async (columns) => {
      const args = ["search", "deploy", "rollout", "--limit", "3"]
      const [quick, slow] = await Promise.all([
        atTerminal(bundledProgram("blctx"), args, columns),
        atTerminal(fullCli, args, columns)
      ])
      expect(slow.effectLoaded).toBe(true)
      expect(slow.code, slow.stdout).toBe(0)
      expect(quick.effectLoaded, quick.stdout).toBe(false)
      expect(quick.stdout).toBe(slow.stdout)
      expect(quick.stdout).toContain("\u001b[1m")
      expect(quick.stdout).toContain("results for")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: colors are not columns
      const lines = quick.stdout.replace(/\u001b\[[0-9;]*m/g, "").split("\r\n")
      for (const line of lines) if (line.length > columns) expect(line.trim().split(/\s+/), line).toHaveLength(1)
      if (columns === 80) expect(lines.length).toBeGreaterThan(6)
    }
  )

  it("leaves what it does not fully understand to the full CLI", async () => {
    for (const args of [
      ["search", "rollout", "--pretty", "false"],
      ["search", "rollout", "--limit=2"],
      ["search", "--help"]
    ]) {
      const result = await fast(args)
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0)
      expect(result.effectLoaded, args.join(" ")).toBe(true)
    }
    // A usage error is the full CLI's own, exit 2.
    const usage = await fast(["search", "rollout", "--agent", "cursor"])
    expect(usage.effectLoaded).toBe(true)
    expect(usage.code).toBe(2)
  })

  it("falls back on the daemon's error answer, and prints the full CLI's error exactly", async () => {
    // The fast path sends what it does not check (a time) to the daemon, which refuses it; the full
    // CLI then finds it is no time before asking anything (a usage error).
    const args = ["search", "rollout", "--since", "not-a-time"]
    const [quick, slow] = [await fast(args), await full(args)]
    expect(slow.code).toBe(2)
    expect(quick.effectLoaded).toBe(true)
    expect({ code: quick.code, stdout: quick.stdout, stderr: quick.stderr }).toEqual({
      code: slow.code,
      stdout: slow.stdout,
      stderr: slow.stderr
    })
  })

  it("with no daemon running, falls back, starts the daemon and answers the same; then goes fast again", async () => {
    const args = ["search", "blue-green", "rollout"]
    const before = await fast(args)
    expect(before.effectLoaded).toBe(false)
    expect((JSON.parse(before.stdout) as { results: Array<unknown> }).results.length).toBeGreaterThan(0)
    const pids = h.daemonPids()
    expect(pids.length).toBeGreaterThan(0)
    for (const pid of pids) process.kill(pid, "SIGKILL")
    await waitFor("the daemon to die", () => (pids.some(isAlive) ? undefined : true), 10_000)

    const restarted = await fast(args)
    expect(restarted.code, restarted.stderr).toBe(0)
    expect(restarted.effectLoaded).toBe(true)
    expect(restarted.stdout).toBe(before.stdout)
    expect(h.daemonPids().length).toBeGreaterThan(0)

    const again = await fast(args)
    expect(again.effectLoaded).toBe(false)
    expect(again.stdout).toBe(before.stdout)
  })
})
