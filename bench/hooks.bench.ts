import { execFile, spawn } from "node:child_process"
import { mkdirSync, readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { benchHome, figure, line, percentile } from "./measure.js"
import { writeSyntheticHistory } from "./synthetic-history.js"

const exec = promisify(execFile)
const here = NodePath.dirname(fileURLToPath(import.meta.url))
const cli = NodePath.join(here, "..", "programs", "cli.js")
/** The codex CLI of this package's dependencies: codex_hooks asks it for the hooks it loads. */
export const codexBin = NodePath.join(here, "..", "..", "node_modules", ".bin")

const RUNS = 40
export const EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] as const
export type EventName = (typeof EVENTS)[number]

const msSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

/** Runs a shell command line as Codex runs a hook (`sh -c`), feeding `stdin`; resolves its wall time and stdout. */
export const timeCommand = (command: string, stdin: string, env: NodeJS.ProcessEnv) =>
  new Promise<{ readonly ms: number; readonly stdout: string; readonly code: number | null }>((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn("/bin/sh", ["-c", command], { env, stdio: ["pipe", "pipe", "ignore"] })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ ms: msSince(start), stdout, code }))
    child.stdin.end(stdin)
  })

const figures = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) }
}

/** The commands codex_hooks registered, by event, read back from the Codex hooks file. */
export const registeredCommands = (codexHome: string): Record<EventName, string> => {
  const file = JSON.parse(readFileSync(NodePath.join(codexHome, "hooks.json"), "utf8")) as {
    hooks: Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>>
  }
  const commandOf = (event: EventName) => {
    const command = file.hooks[event]
      ?.flatMap((group) => group.hooks.map((h) => h.command))
      .find((c) => c.includes("blctx-hook"))
    if (command === undefined) throw new Error(`codex_hooks registered no ${event} hook`)
    return command
  }
  return Object.fromEntries(EVENTS.map((e) => [e, commandOf(e)])) as Record<EventName, string>
}

export const payload = (event: EventName, codexHome: string, round: number) =>
  JSON.stringify({
    session_id: `bench-session-${round % 4}`,
    transcript_path: NodePath.join(codexHome, "sessions", "2026", "01", "01", `rollout-bench-${round % 4}.jsonl`),
    cwd: codexHome,
    hook_event_name: event,
    ...(event === "UserPromptSubmit"
      ? { turn_id: `turn-${round}`, prompt: "what did we decide about the deploy rollout and the migration schema?" }
      : {}),
    ...(event === "Stop" ? { turn_id: `turn-${round}`, last_assistant_message: "done" } : {})
  })

/**
 * Each hook handler as Codex runs it, a whole process through `sh -c`, against a bare
 * `node -e ""` started the same way in the same rounds: idle, then while the daemon imports a
 * large history (the import holds the database's write lock for a whole file; capture must not
 * wait behind it). Prompt recall asks the daemon for matches within its deadline (150 ms).
 */
export const run = async () => {
  const { home, env: base, dispose } = benchHome("blctx-bench-hooks-")
  const env = { ...base, PATH: `${codexBin}:${base.PATH ?? ""}` }
  const codexHome = NodePath.join(home, ".codex")
  try {
    await exec(process.execPath, [cli, "install", "codex", "--step", "background_service", "--json"], { env })
    const warm = writeSyntheticHistory(NodePath.join(home, "history"), 10, 40)
    await exec(process.execPath, [cli, "index", ...warm, "--wait"], { env, maxBuffer: 16 * 1024 * 1024 })
    mkdirSync(codexHome, { recursive: true, mode: 0o700 })
    await exec(process.execPath, [cli, "install", "codex", "--step", "codex_hooks", "--hooks", "--json"], { env })
    const commands = registeredCommands(codexHome)
    const bareCommand = `${process.execPath} -e ""`

    const measure = async (label: string) => {
      const bare: Array<number> = []
      const byEvent = new Map<EventName, Array<number>>(EVENTS.map((e) => [e, []]))
      let recalled = 0
      for (let round = 0; round < RUNS; round++) {
        bare.push((await timeCommand(bareCommand, "", env)).ms)
        for (const event of EVENTS) {
          const result = await timeCommand(commands[event], payload(event, codexHome, round), env)
          if (result.code !== 0) throw new Error(`the ${event} hook exited ${result.code}`)
          byEvent.get(event)?.push(result.ms)
          if (event === "UserPromptSubmit" && result.stdout.includes("additionalContext")) recalled++
        }
      }
      const b = figures(bare)
      line(`${label}: bare node -e "" p50 / p95`, `${b.p50.toFixed(0)} ms / ${b.p95.toFixed(0)} ms`)
      for (const event of EVENTS) {
        const f = figures(byEvent.get(event) ?? [])
        const ratio =
          event === "UserPromptSubmit"
            ? `p95 - bare p95 = +${(f.p95 - b.p95).toFixed(0)} ms`
            : `p95 ${(f.p95 / b.p95).toFixed(2)}x bare`
        line(
          `${label}: ${event} p50 / p95 (${RUNS} runs)`,
          `${f.p50.toFixed(0)} ms / ${f.p95.toFixed(0)} ms (${ratio})`
        )
        figure(`hook ${event} p95, ${label}`, f.p95, "ms", { reference: { name: "bare node p95", value: b.p95 } })
      }
      line(`${label}: prompts answered with history`, `${recalled} of ${RUNS}`)
    }

    await measure("idle")

    const large = writeSyntheticHistory(NodePath.join(home, "large"), 40, 400, 11, 1000)
    const submitted = await exec(process.execPath, [cli, "index", ...large], { env, maxBuffer: 64 * 1024 * 1024 })
    const jobId = String(JSON.parse(submitted.stdout).job?.id ?? "")
    await measure("during import")
    const status = await exec(process.execPath, [cli, "index-status", jobId], { env, maxBuffer: 16 * 1024 * 1024 })
    line("import job state after the runs", String(JSON.parse(status.stdout).job?.state ?? "unknown"))
  } finally {
    await exec(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
}
