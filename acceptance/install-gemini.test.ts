import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { tinyModelConfig } from "../testing/model-test-folder.js"
import { checkOf, type DaemonHome, makeDaemonHome, scaled, waitFor } from "./support/daemon-harness.js"
import { bundledProgram, installationArgs, runProcess } from "./support/isolated-home.js"
import { modelData, serveTinyModel, writeBlctxConfig } from "./support/model-server.js"
import { geminiTurn, OFFLINE_SETTINGS, requireGemini } from "./support/real-gemini.js"
import {
  functionCallPart,
  functionResponses,
  offeredFunctions,
  offersTools,
  roleTexts,
  serveScriptedGemini,
  textPart
} from "./support/scripted-gemini-server.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
/** The folder holding the real Gemini CLI (test-tools), put first on PATH as a person's install would be. */
const toolsBin = NodePath.join(root, "test-tools", "node_modules", ".bin")
const NAME = "base-layer-context"
const packagedSkill = NodePath.join(root, "skills", NAME, "SKILL.md")

interface Report {
  readonly target: string
  readonly ready: boolean
  readonly exit_code: number
  readonly checks: ReadonlyArray<{ readonly id: string; readonly status: string; readonly detail: string }>
}

/**
 * A person's Gemini settings as Gemini writes them (two-space JSON): their own server, hooks and
 * keys, with what keeps a headless run on the scripted API and offline (support/real-gemini.ts).
 */
const THEIRS = {
  ...OFFLINE_SETTINGS,
  general: { ...OFFLINE_SETTINGS.general, vimMode: true },
  ui: { theme: "GitHub" },
  mcpServers: { mine: { command: "/bin/true", args: ["--serve"] } },
  hooks: { BeforeTool: [{ matcher: "run_shell_command", hooks: [{ type: "command", command: "/bin/true" }] }] }
}

const PROMPT = "How did we decide to deploy the shop API?"
const ANSWER = "We deploy it blue-green, as decided before."
/** The MCP tool Gemini offers for blctx's search (Gemini prefixes MCP tools with their server). */
const searchToolOf = (names: ReadonlyArray<string>) => names.find((n) => n.includes("context") && n.endsWith("search"))

describe("blctx install gemini with the real Gemini CLI, a detached daemon and the tiny model", () => {
  let h: DaemonHome | undefined
  afterEach(() => {
    h?.dispose()
    h = undefined
  })

  it.skipIf(modelData() === undefined)(
    "install gemini is ready in a fresh home; gemini lists the server connected and the skill; status and doctor agree; a real Gemini turn gets recalled Codex history from the hook and blctx's search through MCP, and is captured; uninstall leaves the person's settings.json as it was",
    async () => {
      requireGemini()
      const home = makeDaemonHome("detached")
      h = home
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        // Prompt-time recall gets a deadline a loaded test machine meets (the default is 150 ms).
        writeBlctxConfig(home, { ...tinyModelConfig(data, server.endpoint), prompt_recall: { deadline_ms: 10_000 } })
        // Earlier history (a Codex session), which the Gemini turn should recall.
        const sessions = NodePath.join(home.codexHome, "sessions", "2026", "02", "02")
        Fs.mkdirSync(sessions, { recursive: true })
        const indexed = NodePath.join(sessions, "rollout-2026-02-02T09-00-00-session-1.jsonl")
        Fs.copyFileSync(NodePath.join(root, "fixtures", "history", "session-1.jsonl"), indexed)
        const geminiHome = NodePath.join(home.home, ".gemini")
        const settingsFile = NodePath.join(geminiHome, "settings.json")
        Fs.mkdirSync(geminiHome, { recursive: true, mode: 0o700 })
        // As Gemini writes it: two spaces, no final newline.
        const original = JSON.stringify(THEIRS, null, 2)
        Fs.writeFileSync(settingsFile, original)

        const env = { PATH: `${toolsBin}:${process.env.PATH ?? ""}` }
        const blctx = (args: ReadonlyArray<string>) => home.blctx(args, { env })
        // The person's own `gemini` (MCP servers start only in folders they trust: trusted here).
        const gemini = (args: ReadonlyArray<string>) =>
          runProcess(NodePath.join(toolsBin, "gemini"), args, {
            env: {
              HOME: home.home,
              PATH: process.env.PATH ?? "",
              GEMINI_CLI_NO_RELAUNCH: "true",
              GEMINI_CLI_TRUST_WORKSPACE: "true",
              NO_COLOR: "1",
              NO_BROWSER: "true"
            }
          })
        const report = (stdout: string) => JSON.parse(stdout) as Report
        const failed = (r: Report) => r.checks.filter((c) => c.status !== "passed").map((c) => `${c.id}: ${c.detail}`)

        const install = await blctx(["install", "gemini", "--json"])
        const installed = report(install.stdout)
        expect(failed(installed), install.stderr).toEqual([])
        expect(installed).toMatchObject({ target: "gemini", ready: true, exit_code: 0 })
        expect(installed.checks.map((c) => c.id)).toEqual([
          "data_directory",
          "background_service",
          "gemini_mcp",
          "gemini_skills",
          "embedding_model",
          "session_discovery",
          "history_index",
          "service_health",
          "mcp_health",
          "history_retrieval",
          "gemini_hooks"
        ])
        expect(checkOf(install.stdout, "gemini_mcp").detail).toMatch(/^registered base-layer-context at user scope/)

        // status and doctor agree with install.
        const [status, doctor] = await Promise.all([
          blctx(["status", "gemini", "--json"]),
          blctx(["doctor", "gemini", "--json"])
        ])
        expect(failed(report(status.stdout)), status.stderr).toEqual([])
        expect(checkOf(status.stdout, "gemini_mcp").detail).toContain("Gemini reports it connected")
        expect(report(status.stdout).checks.map((c) => [c.id, c.status])).toEqual(
          installed.checks.map((c) => [c.id, c.status])
        )
        expect(failed(report(doctor.stdout)), doctor.stderr).toEqual([])
        expect(report(doctor.stdout).checks.map((c) => [c.id, c.status])).toEqual(
          installed.checks.map((c) => [c.id, c.status])
        )

        // A real Gemini turn: the prompt hook recalls the Codex decision into the request the model
        // gets, and the model's call of blctx's search through MCP returns it cited.
        const api = await serveScriptedGemini((request) => {
          if (!offersTools(request)) return [textPart("{}")]
          const search = searchToolOf(offeredFunctions(request))
          if (functionResponses(request).length > 0 || search === undefined) return [textPart(ANSWER)]
          return [functionCallPart(search, { query: "blue-green rollout behind the load balancer" })]
        })
        try {
          const project = NodePath.join(home.home, "project")
          Fs.mkdirSync(project)
          const run = await geminiTurn(home, api.baseUrl, PROMPT, { cwd: project, extraArgs: ["--yolo"] })
          expect(run.timedOut, `gemini -p did not finish: ${run.stderr}`).toBe(false)
          expect(run.code, run.stdout + run.stderr).toBe(0)
          const turn = api.requests.find((r) => offersTools(r) && roleTexts(r, "user").some((t) => t.includes(PROMPT)))
          expect(turn, JSON.stringify(api.refusals)).toBeDefined()
          const offered = offeredFunctions(turn as (typeof api.requests)[number])
          expect(searchToolOf(offered), offered.join(", ")).toBeDefined()
          const context = roleTexts(turn as (typeof api.requests)[number], "user").join("\n")
          // The tiny test model ranks by chance: what counts is a Codex excerpt, framed and cited.
          expect(context).toContain("blctx recalled history")
          expect(context).toMatch(/&lt;blctx-history nonce="[0-9a-f]{16}" n="1" type="transcript" agent="codex" /)
          expect(context).toContain(`source="${indexed}:`)
          const answered = api.requests.flatMap(functionResponses)
          const searched = answered.find((f) => f.name === searchToolOf(offered))
          expect(searched, JSON.stringify(answered).slice(0, 2_000)).toBeDefined()
          expect(searched?.text).toContain("blue-green rollout")
          expect(searched?.text).toContain(indexed)
        } finally {
          await api.close()
        }
        // Every Gemini hook reached blctx (BeforeAgent and AfterAgent as the prompt and the turn's
        // end), and the daemon indexed the Gemini session they captured.
        const capture = await waitFor(
          "the Gemini session captured and indexed",
          async () => {
            const s = await blctx(["index-status"])
            const c = (
              JSON.parse(s.stdout) as {
                capture?: { events: Record<string, number>; indexed_sessions: number; errors: number }
              }
            ).capture
            return c !== undefined && c.indexed_sessions > 0 ? c : undefined
          },
          scaled(60_000)
        )
        expect(capture.events).toEqual({ SessionStart: 1, UserPromptSubmit: 1, Stop: 1, SessionEnd: 1 })
        expect(capture.errors).toBe(0)

        // Gemini itself: the registration runs the bundled MCP server and connects; the skill is discovered.
        // `gemini skills list` records a session of its own in the home: asked after status and doctor.
        const [list, skills] = await Promise.all([gemini(["mcp", "list"]), gemini(["skills", "list"])])
        expect(list.stderr + list.stdout).toMatch(new RegExp(`✓ ${NAME}: .*blctx-mcp\\.mjs .*\\(stdio\\) - Connected`))
        const skill = NodePath.join(geminiHome, "skills", NAME, "SKILL.md")
        expect(skills.stdout).toContain(`${NAME} [Enabled]`)
        expect(skills.stdout).toContain(`Location:    ${skill}`)
        expect(Fs.readFileSync(skill, "utf8")).toBe(Fs.readFileSync(packagedSkill, "utf8"))
        const settings = JSON.parse(Fs.readFileSync(settingsFile, "utf8"))
        expect(settings.mcpServers[NAME]).toMatchObject({
          command: process.execPath,
          args: [bundledProgram("blctx-mcp"), ...installationArgs(home, home.installationId())]
        })
        expect(settings.mcpServers.mine).toEqual(THEIRS.mcpServers.mine)
        expect(Object.keys(settings.hooks).sort()).toEqual(
          ["AfterAgent", "BeforeAgent", "BeforeTool", "SessionEnd", "SessionStart"].sort()
        )
        expect(settings.hooks.BeforeTool).toEqual(THEIRS.hooks.BeforeTool)

        const uninstall = await blctx(["uninstall", "gemini", "--purge", "--json"])
        expect(uninstall.code, uninstall.stdout + uninstall.stderr).toBe(0)
        expect(Fs.existsSync(NodePath.join(home.xdg.data, "blctx"))).toBe(false)
        expect(Fs.readFileSync(settingsFile, "utf8")).toBe(original)
        expect(Fs.existsSync(skill)).toBe(false)
      } finally {
        await server.close()
      }
    },
    300_000
  )
})
