import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { runProcess } from "./support/isolated-home.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
/** The real Codex CLI: the @openai/codex dev dependency, first on PATH. */
const bin = NodePath.join(root, "node_modules", ".bin")
const history = NodePath.join(root, "fixtures", "history")

interface Check {
  readonly id: string
  readonly status: string
  readonly detail: string
}

describe("mcp_health and history_retrieval with real codex, a detached daemon and indexed history", () => {
  let h: DaemonHome | undefined
  afterEach(() => {
    h?.dispose()
    h = undefined
  })

  it("install --step each (with prerequisites) passes; status --step each passes; retrieval says lexical without a model", async () => {
    const home = makeDaemonHome("detached")
    h = home
    Fs.mkdirSync(home.codexHome, { recursive: true, mode: 0o700 })
    const dir = NodePath.join(home.codexHome, "sessions", "2026", "02", "02")
    Fs.mkdirSync(dir, { recursive: true })
    const session = NodePath.join(dir, "rollout-2026-02-02T09-00-00-session-1.jsonl")
    Fs.copyFileSync(NodePath.join(history, "session-1.jsonl"), session)
    const env = { PATH: `${bin}:${process.env.PATH ?? ""}` }
    const blctx = (args: ReadonlyArray<string>) => home.blctx(args, { env })

    const retrieval = await blctx(["install", "codex", "--step", "history_retrieval", "--json"])
    expect(retrieval.code, retrieval.stdout + retrieval.stderr).toBe(0)
    const installed = JSON.parse(retrieval.stdout) as { checks: Array<Check> }
    expect(installed.checks.filter((c) => c.status !== "passed").map((c) => c.id)).toEqual([])
    expect(checkOf(retrieval.stdout, "history_index").detail).toContain("1 files indexed")

    const health = await blctx(["install", "codex", "--step", "mcp_health", "--json"])
    expect(health.code, health.stdout + health.stderr).toBe(0)

    const mcpStatus = await blctx(["status", "--step", "mcp_health", "--json"])
    expect(mcpStatus.code, mcpStatus.stdout + mcpStatus.stderr).toBe(0)
    expect(checkOf(mcpStatus.stdout, "mcp_health").detail).toMatch(
      /^base-layer-context answered over stdio in \d+ ms \(\d+ ms to list its 10 tools, then context_status\): index \w+, queries lexical/
    )

    const retrievalStatus = await blctx(["status", "--step", "history_retrieval", "--json"])
    expect(retrievalStatus.code, retrievalStatus.stdout + retrievalStatus.stderr).toBe(0)
    const detail = checkOf(retrievalStatus.stdout, "history_retrieval").detail
    expect(detail).toContain(`found ${session}:`)
    expect(detail).toContain("query_mode lexical")
    expect(detail).toMatch(/context expanded it to \d+ of \d+ messages/)
  })

  it.skipIf(modelData() === undefined)(
    "install codex --no-history with real codex: data_directory … mcp_health green, an unrelated entry kept through install and uninstall",
    async () => {
      const home = makeDaemonHome("detached")
      h = home
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        useTinyModel(home, data, server)
        Fs.mkdirSync(home.codexHome, { recursive: true, mode: 0o700 })
        const env = { PATH: `${bin}:${process.env.PATH ?? ""}` }
        const blctx = (args: ReadonlyArray<string>) => home.blctx(args, { env })
        const codex = (args: ReadonlyArray<string>) =>
          runProcess(NodePath.join(bin, "codex"), args, { env: { ...home.env, ...env } })
        expect((await codex(["mcp", "add", "other", "--", "/bin/true"])).code).toBe(0)

        const install = await blctx(["install", "codex", "--no-history", "--no-hooks", "--json"])
        const report = JSON.parse(install.stdout) as { checks: Array<Check> }
        const status = Object.fromEntries(report.checks.map((c) => [c.id, c.status]))
        for (const id of ["data_directory", "background_service", "codex_mcp", "embedding_model", "service_health"]) {
          expect(status[id], `${id}: ${install.stdout}`).toBe("passed")
        }
        expect(status.mcp_health, install.stdout).toBe("passed")
        expect(status.codex_hooks).toBe("passed")
        expect([status.session_discovery, status.history_index, status.history_retrieval]).toEqual([
          "skipped",
          "skipped",
          "skipped"
        ])
        // The bundled skill is written where Codex discovers it, and the real Codex lists it.
        expect(status.codex_skills, install.stdout).toBe("passed")
        expect(install.code, install.stdout).toBe(0)
        const skill = NodePath.join(home.codexHome, "skills", "base-layer-context", "SKILL.md")
        expect(Fs.readFileSync(skill, "utf8")).toBe(
          Fs.readFileSync(NodePath.join(root, "skills", "base-layer-context", "SKILL.md"), "utf8")
        )

        const other = await codex(["mcp", "get", "other", "--json"])
        expect(other.code).toBe(0)
        const uninstall = await blctx(["uninstall", "codex", "--json"])
        expect(uninstall.code, uninstall.stdout + uninstall.stderr).toBe(0)
        expect((await codex(["mcp", "get", "base-layer-context", "--json"])).code).toBe(1)
        expect(Fs.existsSync(skill)).toBe(false)
        expect(JSON.parse((await codex(["mcp", "get", "other", "--json"])).stdout).transport.command).toBe("/bin/true")
      } finally {
        await server.close()
      }
    },
    300_000
  )
})
