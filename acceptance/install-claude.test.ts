import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { bundledProgram, installationArgs, runProcess } from "./support/isolated-home.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
/** The real Codex CLI: the @openai/codex dev dependency, first on PATH. */
const bin = NodePath.join(root, "node_modules", ".bin")
/** The real Claude Code CLI, installed apart by `npm run test:tools`; CI installs it, so a missing one fails. */
const claudeBin = NodePath.join(root, "test-tools", "node_modules", ".bin", "claude")
const NAME = "base-layer-context"
const packagedSkill = NodePath.join(root, "skills", NAME, "SKILL.md")

interface Report {
  readonly target: string
  readonly targets?: ReadonlyArray<string>
  readonly ready: boolean
  readonly exit_code: number
  readonly checks: ReadonlyArray<{ readonly id: string; readonly status: string; readonly detail: string }>
}

const requireClaude = () => {
  if (!Fs.existsSync(claudeBin)) {
    throw new Error(`the real Claude Code CLI is missing at ${claudeBin}: run npm run test:tools`)
  }
}

describe("blctx install claude with the real Claude Code CLI, a detached daemon and the tiny model", () => {
  let h: DaemonHome | undefined
  afterEach(() => {
    h?.dispose()
    h = undefined
  })

  it.skipIf(modelData() === undefined)(
    "install claude is ready beside codex; uninstall claude removes only its own and codex keeps working",
    async () => {
      requireClaude()
      const home = makeDaemonHome("detached")
      h = home
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        useTinyModel(home, data, server)
        Fs.mkdirSync(home.codexHome, { recursive: true, mode: 0o700 })
        // One Codex session, so the history steps have something to index and retrieve.
        const sessions = NodePath.join(home.codexHome, "sessions", "2026", "02", "02")
        Fs.mkdirSync(sessions, { recursive: true })
        Fs.copyFileSync(
          NodePath.join(root, "fixtures", "history", "session-1.jsonl"),
          NodePath.join(sessions, "rollout-2026-02-02T09-00-00-session-1.jsonl")
        )
        const env = { PATH: `${bin}:${process.env.PATH ?? ""}`, BLCTX_CLAUDE_BIN: claudeBin }
        const blctx = (args: ReadonlyArray<string>) => home.blctx(args, { env })
        const claudeEnv = {
          HOME: home.home,
          PATH: process.env.PATH ?? "",
          DISABLE_AUTOUPDATER: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
        }
        const claude = (args: ReadonlyArray<string>) => runProcess(claudeBin, args, { env: claudeEnv })
        const report = (stdout: string) => JSON.parse(stdout) as Report
        const failed = (r: Report) => r.checks.filter((c) => c.status !== "passed").map((c) => `${c.id}: ${c.detail}`)

        // Someone else's MCP server and skill, which blctx must keep.
        expect((await claude(["mcp", "add", "--scope", "user", "other", "--", "/bin/true"])).code).toBe(0)
        const otherSkill = NodePath.join(home.home, ".claude", "skills", "other-skill", "SKILL.md")
        Fs.mkdirSync(NodePath.dirname(otherSkill), { recursive: true })
        Fs.writeFileSync(otherSkill, "---\nname: other-skill\ndescription: Someone else's.\n---\n")

        const codex = await blctx(["install", "codex", "--no-hooks", "--json"])
        expect(failed(report(codex.stdout)), codex.stderr).toEqual([])
        expect(report(codex.stdout)).toMatchObject({ target: "codex", ready: true, exit_code: 0 })

        // No TTY and no flag: the hooks are installed (the default).
        const install = await blctx(["install", "claude", "--json"])
        const installed = report(install.stdout)
        expect(failed(installed), install.stderr).toEqual([])
        expect(installed).toMatchObject({ target: "claude", targets: ["claude"], ready: true, exit_code: 0 })
        expect(install.code).toBe(0)
        expect(installed.checks.map((c) => c.id)).toEqual([
          "data_directory",
          "background_service",
          "claude_mcp",
          "claude_skills",
          "embedding_model",
          "session_discovery",
          "history_index",
          "service_health",
          "mcp_health",
          "history_retrieval",
          "claude_hooks"
        ])
        expect(checkOf(install.stdout, "claude_mcp").detail).toMatch(/^registered base-layer-context at user scope/)

        // Claude itself: the registration runs the bundled MCP server and connects.
        const list = await claude(["mcp", "list"])
        expect(list.stdout).toMatch(new RegExp(`${NAME}: .*blctx-mcp\\.mjs .* - ✔ Connected`))
        const config = JSON.parse(Fs.readFileSync(NodePath.join(home.home, ".claude.json"), "utf8"))
        expect(config.mcpServers[NAME]).toMatchObject({
          type: "stdio",
          command: process.execPath,
          args: [bundledProgram("blctx-mcp"), ...installationArgs(home, home.installationId())]
        })
        const skill = NodePath.join(home.home, ".claude", "skills", NAME, "SKILL.md")
        const settingsFile = NodePath.join(home.home, ".claude", "settings.json")
        const hookCommands = () => {
          if (!Fs.existsSync(settingsFile)) return []
          const settings = JSON.parse(Fs.readFileSync(settingsFile, "utf8")) as {
            hooks?: Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>>
          }
          return Object.entries(settings.hooks ?? {}).flatMap(([event, groups]) =>
            groups.flatMap((g) => g.hooks.filter((x) => x.command.includes("blctx-hook")).map(() => event))
          )
        }
        expect(hookCommands().sort()).toEqual(["SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"])
        expect(Fs.readFileSync(skill, "utf8")).toBe(Fs.readFileSync(packagedSkill, "utf8"))

        // Without a target, status checks every installed target at once.
        const all = await blctx(["status", "--json"])
        expect(failed(report(all.stdout)), all.stderr).toEqual([])
        expect(report(all.stdout)).toMatchObject({ target: "all", targets: ["codex", "claude"], ready: true })
        expect(checkOf(all.stdout, "claude_mcp").detail).toMatch(/Claude reports it connected$/)
        expect(checkOf(all.stdout, "mcp_health").detail).toMatch(/^codex: .*; claude: base-layer-context answered/)

        // doctor agrees with status on a fresh install: hooks that have not fired yet are not a fault.
        const claudeStatus = report((await blctx(["status", "claude", "--json"])).stdout)
        const doctor = await blctx(["doctor", "claude", "--json"])
        console.log(`blctx doctor claude --json (exit ${doctor.code}):\n${doctor.stdout}`)
        expect(failed(report(doctor.stdout)), doctor.stderr).toEqual([])
        expect(report(doctor.stdout).checks.map((c) => [c.id, c.status])).toEqual(
          claudeStatus.checks.map((c) => [c.id, c.status])
        )
        expect(checkOf(doctor.stdout, "claude_hooks").detail).toContain("waiting, not a fault: ")
        expect(doctor.code).toBe(0)

        const wrongStep = await blctx(["install", "claude", "--step", "codex_mcp", "--json"])
        expect(wrongStep.code).toBe(2)
        expect(wrongStep.stderr).toContain("--step codex_mcp is not a step of claude")

        const uninstall = await blctx(["uninstall", "claude", "--json"])
        expect(uninstall.code, uninstall.stdout + uninstall.stderr).toBe(0)
        for (const id of ["data_directory", "background_service", "embedding_model"]) {
          expect(checkOf(uninstall.stdout, id).detail).toMatch(/^kept: blctx is still installed for codex/)
        }
        const after = await claude(["mcp", "list"])
        expect(after.stdout).not.toContain(NAME)
        expect(after.stdout).toContain("other:")
        expect(Fs.existsSync(skill)).toBe(false)
        expect(hookCommands()).toEqual([])
        expect(Fs.readFileSync(otherSkill, "utf8")).toContain("other-skill")
        const manifest = JSON.parse(Fs.readFileSync(NodePath.join(home.stateDir, "installation.json"), "utf8"))
        expect([manifest.state, manifest.claude_mcp, manifest.claude_skills, manifest.claude_hooks]).toEqual([
          "active",
          undefined,
          undefined,
          undefined
        ])

        const codexStatus = await blctx(["status", "codex", "--json"])
        expect(failed(report(codexStatus.stdout)), codexStatus.stderr).toEqual([])
        expect(report(codexStatus.stdout)).toMatchObject({ target: "codex", ready: true, exit_code: 0 })
        // Without a target, only codex is installed now.
        expect(report((await blctx(["status", "--json"])).stdout).target).toBe("codex")

        // The last target takes the shared steps with it.
        const last = await blctx(["uninstall", "codex", "--json"])
        expect(last.code, last.stdout + last.stderr).toBe(0)
        expect(checkOf(last.stdout, "data_directory").detail).not.toMatch(/^kept/)
      } finally {
        await server.close()
      }
    },
    300_000
  )

  it.skipIf(modelData() === undefined)(
    "a new Claude Code user with no transcript yet: install claude is ready, with nothing to index",
    async () => {
      requireClaude()
      const home = makeDaemonHome("detached")
      h = home
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        useTinyModel(home, data, server)
        Fs.mkdirSync(NodePath.join(home.home, ".claude"), { recursive: true, mode: 0o700 })
        const env = { PATH: `${bin}:${process.env.PATH ?? ""}`, BLCTX_CLAUDE_BIN: claudeBin }
        const install = await home.blctx(["install", "claude", "--no-hooks", "--json"], { env })
        const installed = JSON.parse(install.stdout) as Report
        expect(
          installed.checks.filter((c) => c.status !== "passed").map((c) => `${c.id}: ${c.detail}`),
          install.stderr
        ).toEqual([])
        expect(installed).toMatchObject({ target: "claude", ready: true, exit_code: 0 })
        expect(checkOf(install.stdout, "history_index").detail).toBe(
          "nothing to index yet: session_discovery found no sessions"
        )
        expect(checkOf(install.stdout, "history_retrieval").detail).toMatch(/^no session indexed yet: /)
        const status = await home.blctx(["status", "claude", "--json"], { env })
        expect(JSON.parse(status.stdout)).toMatchObject({ ready: true, exit_code: 0 })
      } finally {
        await server.close()
      }
    },
    300_000
  )
})
