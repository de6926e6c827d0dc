import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { AGENTS } from "../agents/agents.js"
import type { Step, StepFailure } from "../step.js"
import { hooksStep } from "./hooks-step.js"
import {
  FakeConnector,
  INSTALLATION,
  makeWorld,
  pathInputs,
  runOf,
  useActiveHome
} from "./service-steps.test-support.js"

/** gemini_hooks over the generic hooks step: Gemini's event names, milliseconds, its settings.json shared with the person. */
const fresh = useActiveHome()

const geminiHome = () => NodePath.join(fresh.home(), ".gemini")
const settingsFile = () => NodePath.join(geminiHome(), "settings.json")
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))

const hookEntry = () => {
  const path = NodePath.join(fresh.home(), "pkg", "dist", "bin", "blctx-hook.cjs")
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, "")
  return path
}

const layer = () => {
  Fs.mkdirSync(geminiHome(), { recursive: true })
  const input = pathInputs(fresh.home())
  return Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook: hookEntry(),
      skill: process.execPath
    }),
    FakeConnector(makeWorld(), resolvePaths(input))
  ).pipe(Layer.provideMerge(Paths.layerFrom(input)), Layer.provideMerge(NodeSafeFsLive))
}

const withStep = <A, E>(use: (step: Step) => Effect.Effect<A, E>) =>
  Effect.flatMap(hooksStep(AGENTS.gemini), use).pipe(Effect.provide(layer()))

const failureOf = <A>(result: Either.Either<A, unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}

/** A person's Gemini settings: their MCP servers, UI, hooks of their own, an event blctx does not use. */
const THEIRS = {
  ui: { theme: "GitHub" },
  mcpServers: { mine: { command: "/usr/bin/mine", args: ["--serve"] } },
  general: { vimMode: true },
  hooks: {
    BeforeAgent: [{ matcher: "", hooks: [{ type: "command", command: "./note-prompt.sh", timeout: 900 }] }],
    BeforeTool: [{ matcher: "run_shell_command", hooks: [{ type: "command", command: "./check.sh" }] }]
  },
  security: { auth: { selectedType: "gemini-api-key" } }
}

describe("gemini_hooks", () => {
  it.effect(
    "writes blctx's events under Gemini's names (BeforeAgent, AfterAgent) with millisecond timeouts into the person's settings.json, and uninstall restores it byte for byte",
    () => {
      Fs.mkdirSync(geminiHome(), { recursive: true })
      const original = `${JSON.stringify(THEIRS, null, 2)}\n`
      Fs.writeFileSync(settingsFile(), original)
      return withStep((step) =>
        Effect.gen(function* () {
          const installed = yield* step.install(runOf("install"))
          expect(installed.detail).toBe(
            `4 hooks (SessionStart, BeforeAgent, AfterAgent, SessionEnd) in ${settingsFile()}; Gemini CLI runs them without approval (in folders you trust)`
          )
          const record = manifestJson().gemini_hooks
          expect(record).toHaveLength(1)
          expect(record[0]).toMatchObject({ gemini_home: geminiHome(), settings_file: settingsFile() })
          const doc = JSON.parse(Fs.readFileSync(settingsFile(), "utf8"))
          expect(Object.keys(doc)).toEqual(Object.keys(THEIRS))
          expect(doc.mcpServers).toEqual(THEIRS.mcpServers)
          expect(doc.hooks.BeforeTool).toEqual(THEIRS.hooks.BeforeTool)
          expect(doc.hooks.BeforeAgent[0]).toEqual(THEIRS.hooks.BeforeAgent[0])
          expect(Object.keys(doc.hooks)).toEqual([
            "BeforeAgent",
            "BeforeTool",
            "SessionStart",
            "AfterAgent",
            "SessionEnd"
          ])
          const timeouts: Record<string, number> = {
            SessionStart: 5000,
            BeforeAgent: 2000,
            AfterAgent: 5000,
            SessionEnd: 1000
          }
          // The handler's command keeps blctx's own event name; Gemini's is the key it sits under.
          const handlerEvent: Record<string, string> = {
            SessionStart: "SessionStart",
            BeforeAgent: "UserPromptSubmit",
            AfterAgent: "Stop",
            SessionEnd: "SessionEnd"
          }
          for (const entry of record[0].entries) {
            const groups = doc.hooks[entry.event]
            expect(groups.at(-1)).toEqual({
              hooks: [{ type: "command", command: entry.command, timeout: timeouts[entry.event] }]
            })
            expect(entry.command).toContain(` ${handlerEvent[entry.event]} --installation-id ${INSTALLATION} `)
          }
          expect((yield* step.verify(runOf("status"))).detail).toBe(installed.detail)

          yield* step.uninstall(runOf("uninstall"))
          expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(original)
          expect(manifestJson().gemini_hooks).toBeUndefined()
        })
      )
    }
  )

  it.effect("refuses a settings.json with comments (Gemini reads JSONC), touching nothing", () => {
    Fs.mkdirSync(geminiHome(), { recursive: true })
    const commented = '{\n  // my theme\n  "ui": {"theme": "GitHub"}\n}\n'
    Fs.writeFileSync(settingsFile(), commented)
    return withStep((step) =>
      Effect.gen(function* () {
        const failure = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(failure.detail).toContain(settingsFile())
        expect(failure.remediation).toContain("blctx edits only plain JSON")
        expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(commented)
      })
    )
  })

  it.effect('reports "hooksConfig": {"enabled": false} and never changes it', () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const doc = JSON.parse(Fs.readFileSync(settingsFile(), "utf8"))
        const off = `${JSON.stringify({ ...doc, hooksConfig: { enabled: false } }, null, 2)}\n`
        Fs.writeFileSync(settingsFile(), off)
        const failure = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(failure.detail).toBe(
          `${settingsFile()} sets "hooksConfig": {"enabled": false}, so Gemini CLI runs none of blctx's hooks`
        )
        expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(off)
      })
    )
  )
})
