import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CodexAppServerLive } from "../../../layers/codex-app-server-live.js"
import { CodexCliLive } from "../../../layers/codex-cli-live.js"
import { DaemonConnectorLive } from "../../../layers/daemon-connector-live.js"
import { DetachedSupervisorLive } from "../../../layers/detached-supervisor.js"
import { HttpDownloaderLive } from "../../../layers/http-downloader.js"
import { McpProbeLive } from "../../../layers/mcp-probe-live.js"
import { NodeFileDigestLive } from "../../../layers/model-file-digest.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { OnnxModelRuntimeLazy } from "../../../layers/onnx-model-runtime-lazy.js"
import { SqliteOpenerLive } from "../../../layers/sqlite-opener-live.js"
import { ConfigFile } from "../../config/config-file.js"
import { STEP_IDS } from "../../domain/step-id.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../program-paths.js"
import { installSteps } from "./registry.js"

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
  CodexAppServerLive,
  McpProbeLive
).pipe(Layer.provideMerge(Paths.layerFrom({ home })), Layer.provideMerge(NodeSafeFsLive))

describe("installSteps", () => {
  it.effect("registers the eleven stable ids in display order", () =>
    Effect.gen(function* () {
      const steps = yield* installSteps
      expect(steps.map((s) => s.id)).toEqual([...STEP_IDS])
      expect(new Set(steps.map((s) => s.title)).size).toBe(STEP_IDS.length)
    }).pipe(Effect.provide(TestLive))
  )

  it.effect("every prerequisite comes before its dependent, so display order runs prerequisites first", () =>
    Effect.gen(function* () {
      const steps = yield* installSteps
      const position = new Map(steps.map((s, i) => [s.id, i]))
      for (const [index, step] of steps.entries()) {
        for (const dep of step.requires) expect(position.get(dep), `${step.id} requires ${dep}`).toBeLessThan(index)
      }
    }).pipe(Effect.provide(TestLive))
  )
})
