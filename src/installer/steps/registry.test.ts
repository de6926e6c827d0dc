import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { ClaudeCliLive } from "../../../layers/claude-cli-live.js"
import { CodexAppServerLive } from "../../../layers/codex-app-server-live.js"
import { CodexCliLive } from "../../../layers/codex-cli-live.js"
import { DaemonConnectorLive } from "../../../layers/daemon-connector-live.js"
import { DetachedSupervisorLive } from "../../../layers/detached-supervisor.js"
import { GeminiCliLive } from "../../../layers/gemini-cli-live.js"
import { HttpDownloaderLive } from "../../../layers/http-downloader.js"
import { McpProbeLive } from "../../../layers/mcp-probe-live.js"
import { NodeFileDigestLive } from "../../../layers/model-file-digest.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { OnnxModelRuntimeLazy } from "../../../layers/onnx-model-runtime-lazy.js"
import { SqliteOpenerLive } from "../../../layers/sqlite-opener-live.js"
import { ConfigFile } from "../../config/config-file.js"
import { InstallationId } from "../../domain/installation-id.js"
import { SHARED_STEP_IDS, STEP_IDS, stepIdsFor } from "../../domain/step-id.js"
import { MANIFEST_VERSION, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { runOf } from "../step-run.test-support.js"
import { installedTargets, installSteps, keepShared, stepsFor } from "./registry.js"

const home = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-registry-"))
const TestLive = Layer.mergeAll(
  ManifestStore.Default,
  SqliteOpenerLive,
  Layer.succeed(ProgramPaths, {
    node: process.execPath,
    cli: process.execPath,
    daemon: process.execPath,
    mcp: process.execPath,
    hook: process.execPath,
    skill: process.execPath
  }),
  ConfigFile.Default,
  HttpDownloaderLive,
  NodeFileDigestLive,
  OnnxModelRuntimeLazy,
  DetachedSupervisorLive,
  DaemonConnectorLive,
  CodexCliLive,
  ClaudeCliLive,
  GeminiCliLive,
  CodexAppServerLive,
  McpProbeLive
).pipe(Layer.provideMerge(Paths.layerFrom({ home })), Layer.provideMerge(NodeSafeFsLive))

describe("installSteps", () => {
  it.effect("codex: the eleven stable ids of the shared and Codex steps, in display order", () =>
    Effect.gen(function* () {
      const steps = yield* installSteps
      expect(steps.map((s) => s.id)).toEqual([...stepIdsFor(["codex"])])
      expect(steps).toHaveLength(11)
      expect(new Set(steps.map((s) => s.title)).size).toBe(steps.length)
    }).pipe(Effect.provide(TestLive))
  )

  it.effect("claude: the shared steps and Claude Code's own, in display order; mcp_health needs claude_mcp", () =>
    Effect.gen(function* () {
      const steps = yield* stepsFor(["claude"])
      // claude_hooks joins this list when its step is wired in.
      const withoutHooks = (ids: ReadonlyArray<string>) => ids.filter((id) => id !== "claude_hooks")
      expect(withoutHooks(steps.map((s) => s.id))).toEqual(withoutHooks(stepIdsFor(["claude"])))
      expect(steps.find((s) => s.id === "mcp_health")?.requires).toEqual(["claude_mcp", "service_health"])
      const both = yield* stepsFor(["codex", "claude"])
      expect(withoutHooks(both.map((s) => s.id))).toEqual(withoutHooks(stepIdsFor(["codex", "claude"])))
      expect(both.find((s) => s.id === "mcp_health")?.requires).toEqual(["codex_mcp", "claude_mcp", "service_health"])
    }).pipe(Effect.provide(TestLive))
  )

  it.effect("gemini: the shared steps and Gemini CLI's own, in display order; mcp_health needs gemini_mcp", () =>
    Effect.gen(function* () {
      const steps = yield* stepsFor(["gemini"])
      expect(steps.map((s) => s.id)).toEqual([...stepIdsFor(["gemini"])])
      expect(steps.filter((s) => !SHARED_STEP_IDS.includes(s.id)).map((s) => s.id)).toEqual([
        "gemini_mcp",
        "gemini_skills",
        "gemini_hooks"
      ])
      expect(steps.find((s) => s.id === "mcp_health")?.requires).toEqual(["gemini_mcp", "service_health"])
      const all = yield* stepsFor(["codex", "claude", "gemini"])
      expect(all.map((s) => s.id)).toEqual([...STEP_IDS])
      expect(new Set(all.map((s) => s.title)).size).toBe(all.length)
    }).pipe(Effect.provide(TestLive))
  )

  it.effect("a shared step kept for another target removes nothing and says why", () =>
    Effect.gen(function* () {
      const steps = yield* stepsFor(["claude"])
      for (const step of steps.filter((s) => SHARED_STEP_IDS.includes(s.id))) {
        const kept = keepShared(step, ["codex"])
        const outcome = yield* kept.uninstall(runOf("uninstall", { purge: true }))
        expect(outcome.detail).toMatch(/^kept: blctx is still installed for codex/)
      }
    }).pipe(Effect.provide(TestLive))
  )

  it.effect("every prerequisite comes before its dependent, so display order runs prerequisites first", () =>
    Effect.gen(function* () {
      for (const targets of [["codex"], ["claude"], ["gemini"], ["codex", "claude", "gemini"]] as const) {
        const steps = yield* stepsFor(targets)
        const position = new Map(steps.map((s, i) => [s.id, i]))
        for (const [index, step] of steps.entries()) {
          for (const dep of step.requires) expect(position.get(dep), `${step.id} requires ${dep}`).toBeLessThan(index)
        }
      }
    }).pipe(Effect.provide(TestLive))
  )
})

describe("installedTargets", () => {
  const manifest = (over: Partial<ConstructorParameters<typeof Manifest>[0]>) =>
    Option.some(
      new Manifest({
        version: MANIFEST_VERSION,
        installation_id: InstallationId.make("6f1c8f5e-3b1a-4c2d-9e7f-0a1b2c3d4e5f"),
        state: "active",
        owned_files: [],
        created_directories: [],
        node: "/usr/bin/node",
        cli: "/usr/bin/blctx",
        created_at: "2026-03-01T10:00:00.000Z",
        updated_at: "2026-03-01T10:00:00.000Z",
        ...over
      })
    )
  const mcp = { name: "base-layer-context", command: "/usr/bin/node", args: [] }

  it("names every target with something recorded, only while the installation is active", () => {
    expect(installedTargets(Option.none())).toEqual([])
    expect(installedTargets(manifest({}))).toEqual([])
    expect(installedTargets(manifest({ codex_mcp: [{ codex_home: "/h/.codex", ...mcp }] }))).toEqual(["codex"])
    expect(installedTargets(manifest({ claude_mcp: [{ claude_home: "/h/.claude", ...mcp }] }))).toEqual(["claude"])
    const both = {
      codex_mcp: [{ codex_home: "/h/.codex", ...mcp }],
      claude_skills: [{ claude_home: "/h/.claude", root: "/r", path: "/r/x", version: "1", sha256: "a" }]
    }
    expect(installedTargets(manifest(both))).toEqual(["codex", "claude"])
    expect(installedTargets(manifest({ ...both, state: "inactive" }))).toEqual([])
    const gemini = { gemini_mcp: [{ gemini_home: "/h/.gemini", ...mcp }] }
    expect(installedTargets(manifest(gemini))).toEqual(["gemini"])
    expect(installedTargets(manifest({ ...both, ...gemini }))).toEqual(["codex", "claude", "gemini"])
  })
})
