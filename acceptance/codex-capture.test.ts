import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { writeSyntheticHistory } from "../bench/synthetic-history.js"
import { type DaemonHome, makeDaemonHome, scaled, waitFor } from "./support/daemon-harness.js"
import { proofRounds } from "./support/proof-tier.js"
import { listCodexHooks, pathWithCodex, runCodex, trustHooks, writeCodexConfig } from "./support/real-codex.js"
import {
  assistantMessage,
  type ModelRequest,
  messageTexts,
  type ScriptedModelServer,
  serveScriptedModel
} from "./support/scripted-model-server.js"

/**
 * Capture end to end with real Codex (the `@openai/codex` dev dependency), offline against a
 * scripted loopback model: blctx installs its hooks, the test approves them as a person would in
 * Codex's /hooks (the product never does), and one `codex exec` turn fires SessionStart,
 * UserPromptSubmit, Stop and SessionEnd. The prompt-time recall reaches the model, and the
 * daemon indexes the new rollout with nobody running `blctx index`.
 */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")

const PROMPT = "Remind me how we deploy the shop API behind the load balancer."
/** The scripted model's answer: what the daemon must find in the new rollout afterwards. */
const ANSWER = "Recalled: the shop API ships with a blue-green rollout; quokka-lantern-7 marks this turn."
const ANSWER_QUERY = "quokka-lantern-7"
/** An unrelated hook a person already had: it must survive install and uninstall. */
/** Stop hooks started at once against a busy writer: 60 in CI, 200 under `npm run proof`. */
const HOOKS = proofRounds({ quick: 60, full: 200 }, process.env.BLCTX_CONCURRENT_HOOKS)

const OTHER_HOOK = { type: "command", command: "/bin/true unrelated-hook", timeout: 3 }

let home: DaemonHome | undefined
let model: ScriptedModelServer | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
  home?.dispose()
  home = undefined
})

const hooksFile = (h: DaemonHome) => NodePath.join(h.codexHome, "hooks.json")

/** Developer messages of a request: where Codex puts hook `additionalContext`. */
const developerTexts = (request: ModelRequest) => messageTexts(request, "developer").join("\n")

const blctxJson = async (h: DaemonHome, args: ReadonlyArray<string>) => {
  const run = await h.blctx(args, { env: { PATH: pathWithCodex() } })
  return { ...run, json: JSON.parse(run.stdout) as { readonly [key: string]: unknown } }
}

describe("capture with real Codex", () => {
  it(
    "installs the hooks pending trust, recalls history into the prompt, and indexes the new turn without blctx index",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      const base = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(base.code, base.stdout + base.stderr).toBe(0)

      const indexedDir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
      Fs.mkdirSync(indexedDir, { recursive: true })
      const indexed = NodePath.join(indexedDir, "rollout-2026-02-02T09-00-00-session-1.jsonl")
      Fs.copyFileSync(NodePath.join(history, "session-1.jsonl"), indexed)
      const index = await h.blctx(["index", indexed, "--wait"])
      expect(index.code, index.stdout + index.stderr).toBe(0)

      const server = await serveScriptedModel(() => [assistantMessage(ANSWER)])
      model = server
      writeCodexConfig(h, server.baseUrl)
      Fs.writeFileSync(hooksFile(h), JSON.stringify({ hooks: { Stop: [{ hooks: [OTHER_HOOK] }] } }, null, 2))
      // The recall deadline is the product's 150 ms by default; a loaded test machine gets the most
      // config.json allows.
      Fs.mkdirSync(NodePath.join(h.xdg.config, "blctx"), { recursive: true, mode: 0o700 })
      Fs.writeFileSync(
        NodePath.join(h.xdg.config, "blctx", "config.json"),
        JSON.stringify({ prompt_recall: { deadline_ms: 10_000 } })
      )

      const install = await blctxJson(h, ["install", "codex", "--step", "codex_hooks", "--hooks", "--json"])
      expect(install.code, install.stdout + install.stderr).toBe(0)
      expect(install.stdout).toContain("approve on next Codex launch: open /hooks and trust the blctx hooks")

      const listed = await listCodexHooks(h)
      const blctxHooks = listed.filter((hook) => hook.command.includes("blctx-hook"))
      expect(blctxHooks.map((hook) => hook.eventName).sort()).toEqual([
        "sessionEnd",
        "sessionStart",
        "stop",
        "userPromptSubmit"
      ])
      expect(blctxHooks.every((hook) => hook.trustStatus === "untrusted" && hook.enabled)).toBe(true)
      expect(listed.filter((hook) => hook.command === OTHER_HOOK.command)).toHaveLength(1)

      trustHooks(h, blctxHooks)
      const project = NodePath.join(h.home, "project")
      Fs.mkdirSync(project)
      const run = await runCodex(h, ["exec", "--skip-git-repo-check", PROMPT], project)
      expect(run.timedOut, `codex exec did not finish: ${run.stderr}`).toBe(false)
      expect(run.code, run.stderr).toBe(0)

      // SessionStart told the agent its binding; UserPromptSubmit recalled the indexed decision,
      // cited and marked as history, into the request the model saw.
      const turn = server.requests.find((r) => messageTexts(r, "user").includes(PROMPT))
      expect(turn, JSON.stringify(server.refusals)).toBeDefined()
      const context = developerTexts(turn as ModelRequest)
      expect(context).toMatch(/binding[_ ]key/i)
      expect(context).toContain("open_session")
      expect(context).toContain("blue-green rollout")
      expect(context).toContain(`${indexed}:`)
      expect(context).toMatch(/never instructions/i)
      expect(context).toMatch(/<blctx-history nonce="[0-9a-f]{16}" n="1" type="transcript" /)

      // The daemon drains the captures and indexes the new rollout: nobody runs blctx index.
      const found = await waitFor(
        "the new turn's answer to be searchable",
        async () => {
          const search = await h.blctx(["search", ANSWER_QUERY])
          const results = (JSON.parse(search.stdout) as { results?: ReadonlyArray<{ text: string }> }).results ?? []
          return results.some((r) => r.text.includes(ANSWER_QUERY)) ? results : undefined
        },
        60_000
      )
      expect(found.length).toBeGreaterThan(0)
      // The recalled excerpt reached the model as context, and context is never indexed again: the
      // decision's own words are found only where they were said.
      const echoed = await h.blctx(["search", "switching traffic only after the health checks pass"])
      const echoes = (
        JSON.parse(echoed.stdout) as { results: ReadonlyArray<{ text: string; source: { path?: string } }> }
      ).results.filter((r) => r.text.includes("health checks pass"))
      expect(echoes.length).toBeGreaterThan(0)
      expect(echoes.map((r) => r.source.path)).toEqual(echoes.map(() => indexed))

      const status = await waitFor(
        "every hook event to be counted",
        async () => {
          const s = await h.blctx(["index-status"])
          const capture = (JSON.parse(s.stdout) as { capture?: { events: Record<string, number> } }).capture
          return capture !== undefined && Object.values(capture.events).every((n) => n >= 1) ? capture : undefined
        },
        30_000
      )
      expect(status.events).toMatchObject({ SessionStart: 1, UserPromptSubmit: 1, Stop: 1, SessionEnd: 1 })

      // Uninstall removes blctx's hooks and nothing else.
      const uninstall = await blctxJson(h, ["uninstall", "codex", "--json"])
      expect(uninstall.code, uninstall.stdout + uninstall.stderr).toBe(0)
      const after = await listCodexHooks(h)
      expect(after.filter((hook) => hook.command.includes("blctx-hook"))).toEqual([])
      expect(after.map((hook) => hook.command)).toEqual([OTHER_HOOK.command])
    },
    scaled(300_000)
  )

  it(
    `${HOOKS} concurrent Stop hooks while the daemon imports a large history all exit 0, and every event reaches the database`,
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      const base = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(base.code, base.stdout + base.stderr).toBe(0)
      Fs.mkdirSync(h.codexHome, { recursive: true, mode: 0o700 })
      const install = await blctxJson(h, ["install", "codex", "--step", "codex_hooks", "--hooks", "--json"])
      expect(install.code, install.stdout + install.stderr).toBe(0)
      const registered = JSON.parse(Fs.readFileSync(hooksFile(h), "utf8")) as {
        hooks: Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>>
      }
      const stopCommand = registered.hooks.Stop?.[0]?.hooks[0]?.command ?? ""
      expect(stopCommand).toContain("blctx-hook")

      // A history large enough that its import is still running while the hooks run (40 files
      // were once outrun on an idle machine: the assertion below raced).
      const large = writeSyntheticHistory(NodePath.join(h.home, "large"), 120, 400)
      const submitted = await h.blctx(["index", ...large])
      expect(submitted.code, submitted.stderr).toBe(0)
      const jobId = String((JSON.parse(submitted.stdout) as { job: { id: string } }).job.id)
      const jobState = async () =>
        (JSON.parse((await h.blctx(["index-status", jobId])).stdout) as { job: { state: string } }).job.state
      await waitFor("the import to start", async () => ((await jobState()) === "running" ? true : undefined))
      // The daemon's main thread (where the import runs) yields the CPU to the hook processes,
      // so on a quiet or a loaded machine alike the import is still running when the last hook
      // exits: what is proved is hooks against a busy writer, not which of the two is faster.
      const [daemon] = h.daemonPids()
      expect(daemon).toBeDefined()
      execFileSync("renice", ["-n", "19", "-p", String(daemon)], { stdio: "ignore" })

      // As Codex runs a hook: `sh -c COMMAND`, the event on stdin.
      const runStop = (i: number) =>
        new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
          const child = spawn("/bin/sh", ["-c", stopCommand], { cwd: h.home, stdio: ["pipe", "ignore", "pipe"] })
          let stderr = ""
          child.stderr.setEncoding("utf8").on("data", (d: string) => {
            stderr += d
          })
          child.on("error", reject)
          child.on("close", (code) => resolve({ code, stderr }))
          child.stdin.end(
            JSON.stringify({
              session_id: `concurrent-session-${i % 20}`,
              turn_id: `turn-${i}`,
              transcript_path: null,
              cwd: h.home,
              hook_event_name: "Stop",
              last_assistant_message: "done"
            })
          )
        })
      const runs = await Promise.all(Array.from({ length: HOOKS }, (_, i) => runStop(i)))
      expect(runs.filter((r) => r.code !== 0)).toEqual([])
      expect(runs.filter((r) => r.stderr.trim() !== "blctx-hook: Stop captured captured")).toEqual([])
      // The hooks ran against a busy writer: the import had not finished when the last one exited.
      expect(await jobState()).toBe("running")

      // None is lost: the daemon drains all of them into the database.
      const capture = await waitFor(
        `all ${HOOKS} Stop events to be drained`,
        async () => {
          const s = await h.blctx(["index-status"])
          const c = (JSON.parse(s.stdout) as { capture?: { events: Record<string, number>; null_paths: number } })
            .capture
          return c !== undefined && c.events.Stop === HOOKS ? c : undefined
        },
        120_000
      )
      expect(capture.events).toEqual({ SessionStart: 0, UserPromptSubmit: 0, Stop: HOOKS, SessionEnd: 0 })
      // Twenty sessions, none with a transcript yet: each waits for a path, none is guessed.
      expect(capture.null_paths).toBe(20)
    },
    scaled(400_000)
  )
})
