import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { bundledProgram, installationArgs, runProcess } from "./support/isolated-home.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"
import { requireGemini } from "./support/real-gemini.js"

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

/** A person's Gemini settings as Gemini writes them (two-space JSON): their own server, hooks and keys. */
const THEIRS = {
  general: { vimMode: true, enableAutoUpdate: false },
  ui: { theme: "GitHub" },
  mcpServers: { mine: { command: "/bin/true", args: ["--serve"] } },
  hooks: { BeforeTool: [{ matcher: "run_shell_command", hooks: [{ type: "command", command: "/bin/true" }] }] },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false }
}

describe("blctx install gemini with the real Gemini CLI, a detached daemon and the tiny model", () => {
  let h: DaemonHome | undefined
  afterEach(() => {
    h?.dispose()
    h = undefined
  })

  it.skipIf(modelData() === undefined)(
    "install gemini is ready in a fresh home; gemini lists the server connected and the skill; status and doctor agree; uninstall leaves the person's settings.json as it was",
    async () => {
      requireGemini()
      const home = makeDaemonHome("detached")
      h = home
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        useTinyModel(home, data, server)
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

        const uninstall = await blctx(["uninstall", "gemini", "--json"])
        expect(uninstall.code, uninstall.stdout + uninstall.stderr).toBe(0)
        expect(Fs.readFileSync(settingsFile, "utf8")).toBe(original)
        expect(Fs.existsSync(skill)).toBe(false)
      } finally {
        await server.close()
      }
    },
    300_000
  )
})
