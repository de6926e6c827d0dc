import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { CodexAppServerLive } from "../../../layers/codex-app-server-live.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { CodexAppServer } from "../../codex/codex-app-server.js"
import { renderHooksDocument } from "../../codex/hooks-file.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { AGENTS } from "../agents/agents.js"
import { APPROVE_HOOKS } from "../agents/codex.js"
import type { Step } from "../step.js"
import { hooksStep } from "./hooks-step.js"

const codexHooksStep = hooksStep(AGENTS.codex)

import {
  FakeConnector,
  INSTALLATION,
  makeWorld,
  pathInputs,
  runOf,
  useActiveHome
} from "./service-steps.test-support.js"

/** The real Codex CLI (the @openai/codex dev dependency), offline, in the test's home. */
const bin = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "node_modules", ".bin")

const fresh = useActiveHome()

const withStep = <A, E>(use: (step: Step, codex: CodexAppServer["Type"]) => Effect.Effect<A, E>) => {
  const inputs = pathInputs(fresh.home())
  Fs.mkdirSync(inputs.CODEX_HOME, { recursive: true })
  const hook = NodePath.join(fresh.home(), "pkg", "dist", "bin", "blctx-hook.mjs")
  Fs.mkdirSync(NodePath.dirname(hook), { recursive: true })
  Fs.writeFileSync(hook, "")
  const layer = Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook,
      skill: process.execPath
    }),
    FakeConnector(makeWorld(), fresh.paths()),
    CodexAppServerLive
  ).pipe(Layer.provideMerge(Paths.layerFrom(inputs)), Layer.provideMerge(NodeSafeFsLive))
  return Effect.gen(function* () {
    const step = yield* codexHooksStep
    return yield* use(step, yield* CodexAppServer)
  }).pipe(
    Effect.provide(layer),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PATH", `${bin}:${process.env.PATH ?? ""}`]])))
  )
}

const THEIRS = {
  hooks: { Stop: [{ matcher: "", hooks: [{ type: "command", command: "notify-send done", timeout: 7 }] }] }
}

describe("codex_hooks with the real codex", () => {
  it.effect(
    "Codex loads what install writes; trust given in Codex is reported and survives a reinstall; uninstall restores the file",
    () =>
      withStep((step, codex) =>
        Effect.gen(function* () {
          const codexHome = fresh.paths().codexHome
          const hooksFile = `${codexHome}/hooks.json`
          Fs.writeFileSync(hooksFile, renderHooksDocument(THEIRS))

          const installed = yield* step.install(runOf("install"))
          expect(installed.detail).toContain(`${APPROVE_HOOKS} (0 of 4 trusted;`)

          // What a person's approval in /hooks writes (the product never does).
          const listing = yield* codex.listHooks(codexHome, fresh.home())
          const ours = listing.hooks.filter((h) => h.command?.includes(INSTALLATION))
          expect(ours.map((h) => [h.eventName, h.timeoutSec]).sort()).toEqual([
            ["sessionEnd", 1],
            ["sessionStart", 5],
            ["stop", 5],
            ["userPromptSubmit", 2]
          ])
          Fs.writeFileSync(
            `${codexHome}/config.toml`,
            ours.map((h) => `[hooks.state."${h.key}"]\ntrusted_hash = "${h.currentHash}"\n`).join("")
          )
          const trusted = "trusted in Codex (4 of 4)"
          expect((yield* step.verify(runOf("status"))).detail).toContain(trusted)
          expect((yield* step.install(runOf("install"))).detail).toContain(trusted)

          yield* step.uninstall(runOf("uninstall"))
          expect(Fs.readFileSync(hooksFile, "utf8")).toBe(renderHooksDocument(THEIRS))
        })
      ),
    120_000
  )
})
