import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { runAgentCli } from "./agent-run.js"
import { type DaemonHome, scaled } from "./daemon-harness.js"

/**
 * Test support: the real Codex CLI (the `@openai/codex` dev dependency), run offline in a test
 * home against a scripted loopback model (support/scripted-model-server.ts).
 */
export const codexCli = createRequire(import.meta.url).resolve("@openai/codex/bin/codex.js")
/** The `codex` command as npm installs it, which blctx finds on PATH. */
export const codexBin = NodePath.resolve(import.meta.dirname, "..", "..", "node_modules", ".bin", "codex")
/** PATH with that codex first, for the blctx commands that ask Codex. */
export const pathWithCodex = () => `${NodePath.dirname(codexBin)}:${process.env.PATH ?? ""}`

export const KEY_VAR = "BLCTX_TEST_MODEL_KEY"
export const KEY = "scripted-model-key"

/**
 * Runs the Codex CLI with this home's environment and stdin closed. Its process group (Codex and
 * the MCP servers and hooks it starts) is killed if it outlives the bound.
 */
export const runCodex = (h: DaemonHome, args: ReadonlyArray<string>, cwd = h.home) =>
  runAgentCli(process.execPath, [codexCli, ...args], { ...h.env, [KEY_VAR]: KEY }, cwd)

/** Where Codex is told to find the scripted model, and no other network use (measured with strace). */
export const writeCodexConfig = (h: DaemonHome, baseUrl: string) => {
  Fs.mkdirSync(h.codexHome, { recursive: true, mode: 0o700 })
  Fs.writeFileSync(
    NodePath.join(h.codexHome, "config.toml"),
    [
      `model_provider = "scripted"`,
      "",
      // Without these Codex 0.171 resolves ab.chatgpt.com (analytics), api.github.com and
      // chatgpt.com (plugin sync) during the turn.
      "[analytics]",
      "enabled = false",
      "",
      "[features]",
      "plugins = false",
      "",
      "[model_providers.scripted]",
      `name = "scripted"`,
      `base_url = "${baseUrl}"`,
      `wire_api = "responses"`,
      `env_key = "${KEY_VAR}"`,
      // A scripting mistake fails the turn at once instead of through minutes of retries.
      "request_max_retries = 0",
      "stream_max_retries = 0",
      ""
    ].join("\n")
  )
}

/** A hook as `codex app-server` `hooks/list` reports it (the fields tests read). */
export interface ListedHook {
  readonly key: string
  readonly eventName: string
  readonly command: string
  readonly enabled: boolean
  readonly currentHash: string
  readonly trustStatus: string
}

/**
 * Asks the real `codex app-server` (newline-delimited `{id, method, params}` over stdio) one
 * question after `initialize`/`initialized`, and returns the answer's `result`.
 */
export const askCodexAppServer = (h: DaemonHome, method: string, params: unknown) =>
  new Promise<unknown>((resolve, reject) => {
    const child = spawn(process.execPath, [codexCli, "app-server"], {
      env: h.env,
      cwd: h.home,
      stdio: ["pipe", "pipe", "ignore"]
    })
    let buffer = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`codex app-server did not answer ${method}`))
    }, scaled(60_000))
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`)
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buffer += d
      for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, i)) as { id?: number; result?: unknown; error?: unknown }
        buffer = buffer.slice(i + 1)
        if (message.id === 0) {
          send({ method: "initialized" })
          send({ id: 1, method, params })
        } else if (message.id === 1) {
          clearTimeout(timer)
          child.kill()
          if (message.error !== undefined) reject(new Error(JSON.stringify(message.error)))
          else resolve(message.result)
        }
      }
    })
    child.on("error", reject)
    send({ id: 0, method: "initialize", params: { clientInfo: { name: "blctx-test", version: "0" } } })
  })

/** The hooks real Codex loads for this home, as `hooks/list` reports them. */
export const listCodexHooks = async (h: DaemonHome): Promise<ReadonlyArray<ListedHook>> => {
  const result = (await askCodexAppServer(h, "hooks/list", { cwds: [h.home] })) as {
    data: ReadonlyArray<{ hooks: ReadonlyArray<ListedHook> }>
  }
  return result.data.flatMap((entry) => entry.hooks)
}

/**
 * Marks hooks trusted the way Codex records a person's approval in config.toml. Tests may do
 * this in an isolated CODEX_HOME; blctx itself never does.
 */
export const trustHooks = (h: DaemonHome, hooks: ReadonlyArray<ListedHook>) =>
  Fs.appendFileSync(
    NodePath.join(h.codexHome, "config.toml"),
    hooks.map((hook) => `\n[hooks.state."${hook.key}"]\ntrusted_hash = "${hook.currentHash}"\n`).join("")
  )
