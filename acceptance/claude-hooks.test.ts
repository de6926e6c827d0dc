import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled, waitFor } from "./support/daemon-harness.js"
import { claudeHomeOf, claudeHooks, claudeSettingsOf, runClaude } from "./support/real-claude.js"
import {
  type AnthropicRequest,
  offersTools,
  requestTexts,
  roleTexts,
  type ScriptedAnthropicServer,
  serveScriptedAnthropic,
  textAnswer
} from "./support/scripted-anthropic-server.js"

/**
 * Capture end to end with real Claude Code (test-tools/, `npm run test:tools`), offline against a
 * scripted loopback Anthropic API: blctx merges its hooks into `~/.claude/settings.json` beside a
 * person's own settings, one `claude -p` turn fires SessionStart, UserPromptSubmit, Stop and
 * SessionEnd, the prompt-time recall reaches the model, and the daemon indexes the new Claude
 * transcript with nobody running `blctx index`.
 */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")

const PROMPT = "Remind me how we deploy the shop API behind the load balancer."
const ANSWER = "Recalled: the shop API ships with a blue-green rollout; wombat-harbor-3 marks this turn."
const ANSWER_QUERY = "wombat-harbor-3"
/** A person's settings: every key and their own hook must survive install. */
const THEIRS = {
  theme: "dark",
  permissions: { allow: ["Bash(ls:*)"] },
  hooks: { Stop: [{ hooks: [{ type: "command", command: "/bin/true unrelated-hook", timeout: 3 }] }] }
}

let home: DaemonHome | undefined
let model: ScriptedAnthropicServer | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
  home?.dispose()
  home = undefined
})

const captureOf = async (h: DaemonHome) => {
  const s = await h.blctx(["index-status"])
  return (
    JSON.parse(s.stdout) as {
      capture?: { events: Record<string, number>; indexed_sessions: number; null_paths: number; errors: number }
    }
  ).capture
}

describe("capture with real Claude Code", () => {
  it(
    "merges the hooks into settings.json, recalls history into the prompt, and indexes the new session without blctx index",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      const base = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(base.code, base.stdout + base.stderr).toBe(0)

      // Earlier history, indexed: what the prompt should recall.
      const indexedDir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
      Fs.mkdirSync(indexedDir, { recursive: true })
      const indexed = NodePath.join(indexedDir, "rollout-2026-02-02T09-00-00-session-1.jsonl")
      Fs.copyFileSync(NodePath.join(history, "session-1.jsonl"), indexed)
      const index = await h.blctx(["index", indexed, "--wait"])
      expect(index.code, index.stdout + index.stderr).toBe(0)
      Fs.mkdirSync(NodePath.join(h.xdg.config, "blctx"), { recursive: true, mode: 0o700 })
      Fs.writeFileSync(
        NodePath.join(h.xdg.config, "blctx", "config.json"),
        JSON.stringify({ prompt_recall: { deadline_ms: 10_000 } })
      )

      Fs.mkdirSync(claudeHomeOf(h), { recursive: true, mode: 0o700 })
      Fs.writeFileSync(claudeSettingsOf(h), JSON.stringify(THEIRS, null, 2))
      const install = await claudeHooks(h, "install")
      expect(install.passed, install.detail).toBe(true)
      const status = await claudeHooks(h, "status")
      expect(status.passed, status.detail).toBe(true)
      expect(status.detail).toContain("4 hooks (SessionStart, UserPromptSubmit, Stop, SessionEnd)")
      const settings = JSON.parse(Fs.readFileSync(claudeSettingsOf(h), "utf8")) as {
        hooks: Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string; timeout: number }> }>>
        [key: string]: unknown
      }
      expect(settings.theme).toBe("dark")
      expect(settings.permissions).toEqual(THEIRS.permissions)
      expect(Object.keys(settings.hooks).sort()).toEqual(["SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"])
      expect(settings.hooks.Stop?.[0]).toEqual(THEIRS.hooks.Stop[0])
      const blctxCommands = Object.values(settings.hooks).flatMap((groups) =>
        groups.flatMap((g) => g.hooks.map((x) => x.command)).filter((c) => c.includes("blctx-hook"))
      )
      expect(blctxCommands).toHaveLength(4)

      const server = await serveScriptedAnthropic((request) => [
        textAnswer(offersTools(request) ? ANSWER : "Shop API deploy")
      ])
      model = server
      const project = NodePath.join(h.home, "project")
      Fs.mkdirSync(project)
      const run = await runClaude(h, server.baseUrl, ["-p", PROMPT], project)
      expect(run.timedOut, `claude -p did not finish: ${run.stderr}`).toBe(false)
      expect(run.code, run.stdout + run.stderr).toBe(0)
      expect(run.stdout).toContain(ANSWER)

      // SessionStart told the agent its binding; UserPromptSubmit recalled the indexed decision,
      // cited and marked as history, into the request the model saw. No hook asked for approval.
      const turn = server.requests.find((r) => offersTools(r) && roleTexts(r, "user").some((t) => t.includes(PROMPT)))
      expect(turn, JSON.stringify(server.refusals)).toBeDefined()
      const context = requestTexts(turn as AnthropicRequest).join("\n")
      expect(context).toMatch(/binding key/i)
      expect(context).toContain("open_session")
      expect(context).toContain("blue-green rollout")
      expect(context).toContain(`${indexed}:`)
      expect(context).toMatch(/never instructions/i)
      expect(context).toMatch(/<blctx-history nonce="[0-9a-f]{16}" n="1" type="transcript" /)

      // Every event type reaches the daemon, tagged with the claude_hooks generation.
      const capture = await waitFor(
        "every Claude Code hook event to be counted",
        async () => {
          const c = await captureOf(h)
          return c !== undefined && Object.values(c.events).every((n) => n >= 1) ? c : undefined
        },
        30_000
      )
      expect(capture.events).toEqual({ SessionStart: 1, UserPromptSubmit: 1, Stop: 1, SessionEnd: 1 })
      expect(capture.null_paths).toBe(0)

      // The daemon indexes the new Claude transcript: nobody runs blctx index.
      const transcripts = Fs.readdirSync(NodePath.join(claudeHomeOf(h), "projects"), { recursive: true })
        .map(String)
        .filter((p) => p.endsWith(".jsonl"))
      expect(transcripts).toHaveLength(1)
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
      const settled = await waitFor("the captured session to be indexed", async () => {
        const c = await captureOf(h)
        return c !== undefined && c.indexed_sessions >= 1 ? c : undefined
      })
      expect(settled.errors).toBe(0)
      // The recalled excerpt reached the model as context (Claude Code records it in the transcript
      // as a hook_additional_context attachment), and context is never indexed again: the
      // decision's own words are found only where they were said.
      const echoed = await h.blctx(["search", "switching traffic only after the health checks pass"])
      const echoes = (
        JSON.parse(echoed.stdout) as { results: ReadonlyArray<{ text: string; source: { path?: string } }> }
      ).results.filter((r) => r.text.includes("health checks pass"))
      expect(echoes.length).toBeGreaterThan(0)
      expect(
        echoes.map((r) => r.source.path),
        echoed.stdout
      ).toEqual(echoes.map(() => indexed))

      // Uninstall removes blctx's hooks and nothing else: the person's settings are as they were.
      const uninstall = await claudeHooks(h, "uninstall")
      expect(uninstall.passed, uninstall.detail).toBe(true)
      expect(JSON.parse(Fs.readFileSync(claudeSettingsOf(h), "utf8"))).toEqual(THEIRS)
    },
    scaled(300_000)
  )
})
