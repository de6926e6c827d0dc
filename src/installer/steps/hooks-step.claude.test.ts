import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { HOOK_EVENTS } from "../../capture/hook-event.js"
import { renderHooksDocument } from "../../codex/hooks-file.js"
import type { Check } from "../../domain/report.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { CaptureStatus } from "../../retrieval/capture-status.js"
import type { ContextStatusResponse } from "../../retrieval/context-status.js"
import { AGENTS } from "../agents/agents.js"
import { runSteps } from "../engine.js"
import { Renderer } from "../renderer.js"
import type { HooksChoice, Step, StepFailure } from "../step.js"
import { declinedDetail, hooksStep } from "./hooks-step.js"

const claudeHooksStep = hooksStep(AGENTS.claude)
const CLAUDE_DECLINED_DETAIL = declinedDetail(AGENTS.claude)

import {
  diagnoseOf,
  FakeConnector,
  type FakeWorld,
  INSTALLATION,
  makeWorld,
  pathInputs,
  runOf,
  useActiveHome
} from "./service-steps.test-support.js"

const fresh = useActiveHome()

const hookEntry = () => {
  const path = NodePath.join(fresh.home(), "pkg", "dist", "bin", "blctx-hook.mjs")
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, "")
  return path
}

const inputs = (claudeHome?: string, create = true) => {
  const base = pathInputs(fresh.home())
  const home = claudeHome ?? NodePath.join(fresh.home(), "claude")
  if (create) Fs.mkdirSync(home, { recursive: true })
  return { ...base, CLAUDE_CONFIG_DIR: home }
}

interface Setup {
  world?: FakeWorld
  claudeHome?: string
  /** Create the claude home first (default true). */
  create?: boolean
}

const layerOf = (setup: Setup) => {
  const input = inputs(setup.claudeHome, setup.create ?? true)
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
    FakeConnector(setup.world ?? makeWorld(), resolvePaths(input))
  ).pipe(Layer.provideMerge(Paths.layerFrom(input)), Layer.provideMerge(NodeSafeFsLive))
}

const withStep = <A, E>(use: (step: Step) => Effect.Effect<A, E>, setup: Setup = {}) =>
  Effect.flatMap(claudeHooksStep, use).pipe(Effect.provide(layerOf(setup)))

const SilentRenderer = Layer.succeed(Renderer, {
  begin: () => Effect.void,
  started: () => Effect.void,
  progress: () => Effect.void,
  finished: () => Effect.void,
  end: () => Effect.void
})

const checkAfter = (command: "install" | "status" | "doctor" | "uninstall", hooks: HooksChoice, setup: Setup = {}) =>
  withStep(
    (step) =>
      Effect.gen(function* () {
        const report = yield* runSteps([step], { command, selected: null, noHistory: false, purge: false, hooks })
        const check = report.checks[0] as Check
        return { status: check.status, detail: check.detail, remediation: check.remediation }
      }).pipe(Effect.provide(SilentRenderer)),
    setup
  )

const claudeHome = () => NodePath.join(fresh.home(), "claude")
const settingsFile = (home = claudeHome()) => `${home}/settings.json`
const settingsJson = (home?: string) => JSON.parse(Fs.readFileSync(settingsFile(home), "utf8"))
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const failureOf = <A>(result: Either.Either<A, StepFailure | unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}
const EVENTS = "SessionStart, UserPromptSubmit, Stop, SessionEnd"
const installedDetail = (home = claudeHome()) =>
  `4 hooks (${EVENTS}) in ${settingsFile(home)}; Claude Code runs them without approval`

/** A person's settings.json: other settings, their own hooks (a matcher, extra fields, an event blctx does not use). */
const THEIRS = {
  model: "opus",
  permissions: { allow: ["Bash(ls:*)"], deny: [] },
  env: { FOO: "bar" },
  hooks: {
    Stop: [{ matcher: "", hooks: [{ type: "command", command: "notify-send done", timeout: 7 }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh" }] }]
  },
  statusLine: { type: "command", command: "echo hi" }
}

describe("claude_hooks install", () => {
  it.effect(
    "writes one group per event into a new settings.json (0600), recorded in claude_hooks, timeouts in seconds",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          const installed = yield* step.install(runOf("install"))
          expect(installed.detail).toBe(installedDetail())
          const record = manifestJson().claude_hooks
          expect(record).toHaveLength(1)
          expect(record[0]).toMatchObject({ claude_home: claudeHome(), settings_file: settingsFile() })
          expect(manifestJson().codex_hooks).toBeUndefined()
          const generation: string = record[0].generation
          expect(generation).toMatch(/^[0-9a-f-]{36}$/)
          const doc = settingsJson()
          expect(Object.keys(doc.hooks)).toEqual([...HOOK_EVENTS])
          for (const entry of record[0].entries) {
            expect(doc.hooks[entry.event]).toEqual([
              {
                hooks: [
                  {
                    type: "command",
                    command: entry.command,
                    timeout: { SessionStart: 5, UserPromptSubmit: 2, Stop: 5, SessionEnd: 1 }[entry.event as string]
                  }
                ]
              }
            ])
            expect(entry.command).toContain(
              ` ${entry.event} --installation-id ${INSTALLATION} --generation ${generation} `
            )
            expect(entry.command).toContain(`${hookEntry()} `)
          }
          expect(Fs.statSync(settingsFile()).mode & 0o777).toBe(0o600)
          expect((yield* step.verify(runOf("status"))).detail).toBe(installedDetail())
        })
      )
  )

  it.effect(
    "merges into a person's settings.json, keeping every other key, hook and the mode, and uninstall restores it",
    () => {
      const original = renderHooksDocument(THEIRS)
      Fs.mkdirSync(claudeHome(), { recursive: true })
      Fs.writeFileSync(settingsFile(), original)
      Fs.chmodSync(settingsFile(), 0o644)
      return withStep((step) =>
        Effect.gen(function* () {
          const generation = Effect.sync(() => manifestJson().claude_hooks[0].generation as string)
          yield* step.install(runOf("install"))
          const doc = settingsJson()
          expect(Object.keys(doc)).toEqual(["model", "permissions", "env", "hooks", "statusLine"])
          expect(doc.permissions).toEqual(THEIRS.permissions)
          expect(doc.statusLine).toEqual(THEIRS.statusLine)
          expect(Object.keys(doc.hooks)).toEqual([
            "Stop",
            "PreToolUse",
            "SessionStart",
            "UserPromptSubmit",
            "SessionEnd"
          ])
          expect(doc.hooks.Stop[0]).toEqual(THEIRS.hooks.Stop[0])
          expect(doc.hooks.Stop).toHaveLength(2)
          expect(doc.hooks.PreToolUse).toEqual(THEIRS.hooks.PreToolUse)
          expect(Fs.statSync(settingsFile()).mode & 0o777).toBe(0o644)

          // A reinstall of current hooks changes nothing and keeps the generation.
          const first = yield* generation
          const written = Fs.readFileSync(settingsFile(), "utf8")
          yield* step.install(runOf("install"))
          expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(written)
          expect(yield* generation).toBe(first)

          const removed = yield* step.uninstall(runOf("uninstall"))
          expect(removed.detail).toBe(`removed blctx's hooks from ${settingsFile()}`)
          expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(original)
          expect(Fs.statSync(settingsFile()).mode & 0o777).toBe(0o644)
          expect(manifestJson().claude_hooks).toBeUndefined()
          expect((yield* step.uninstall(runOf("uninstall"))).detail).toBe(
            "nothing to remove: blctx has no hooks registered with Claude Code"
          )
        })
      )
    }
  )

  it.effect.skipIf(process.getuid?.() !== 0)(
    "(as root) refuses a CLAUDE_CONFIG_DIR reached through another user's link in a sticky folder, writing nothing",
    () => {
      const mine = NodePath.join(fresh.home(), "claude-real")
      Fs.mkdirSync(mine, { recursive: true, mode: 0o700 })
      const shared = NodePath.join(fresh.home(), "shared")
      Fs.mkdirSync(shared)
      Fs.chmodSync(shared, 0o1777)
      const link = NodePath.join(shared, "claude")
      Fs.symlinkSync(mine, link)
      Fs.lchownSync(link, 65_534, 65_534)
      return withStep(
        (step) =>
          Effect.gen(function* () {
            const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
            expect(refused.detail).toContain(`${link} is a symbolic link owned by user 65534`)
            expect(Fs.existsSync(NodePath.join(mine, "settings.json"))).toBe(false)
          }),
        { claudeHome: link, create: false }
      )
    }
  )

  it.effect("refuses a malformed settings.json, touching nothing", () => {
    Fs.mkdirSync(claudeHome(), { recursive: true })
    const cases = ['{"model": "opus",', '{"hooks": {"Stop": {"hooks": []}}}', "[]", '"text"']
    return withStep((step) =>
      Effect.gen(function* () {
        for (const text of cases) {
          Fs.writeFileSync(settingsFile(), text)
          const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
          expect(refused.detail).toMatch(
            new RegExp(`^${settingsFile()} is not a settings file Claude Code can read: .*; nothing was changed$`)
          )
          expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(text)
          expect(manifestJson().claude_hooks).toBeUndefined()
        }
      })
    )
  })

  it.effect("never follows a symlinked settings.json", () => {
    Fs.mkdirSync(claudeHome(), { recursive: true })
    const target = NodePath.join(fresh.home(), "dotfiles-settings.json")
    Fs.writeFileSync(target, "{}\n")
    Fs.symlinkSync(target, settingsFile())
    return withStep((step) =>
      Effect.gen(function* () {
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toContain(`${settingsFile()} is a symbolic link`)
        expect(Fs.readFileSync(target, "utf8")).toBe("{}\n")
        expect(Fs.lstatSync(settingsFile()).isSymbolicLink()).toBe(true)
      })
    )
  })

  it.effect("fails when Claude Code's folder does not exist, creating nothing", () =>
    withStep(
      (step) =>
        Effect.gen(function* () {
          const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
          expect(refused.detail).toContain("does not exist, so there is no Claude Code to add hooks to")
          expect(Fs.existsSync(claudeHome())).toBe(false)
        }),
      { create: false }
    )
  )

  it.effect("refuses a blctx command someone changed, in install, status and uninstall, and keeps it", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const doc = settingsJson()
        const command: string = doc.hooks.Stop[0].hooks[0].command
        doc.hooks.Stop[0].hooks[0].command = `${command} --extra`
        Fs.writeFileSync(settingsFile(), JSON.stringify(doc))
        const before = Fs.readFileSync(settingsFile(), "utf8")
        for (const attempt of [step.install(runOf("install")), step.verify(runOf("status"))]) {
          const refused = failureOf(yield* Effect.either(attempt))
          expect(refused.detail).toContain(`blctx's Stop hook in ${settingsFile()} was changed after blctx wrote it`)
          expect(Fs.readFileSync(settingsFile(), "utf8")).toBe(before)
        }
        const removal = failureOf(yield* Effect.either(step.uninstall(runOf("uninstall"))))
        expect(removal.detail).toContain("was changed after blctx wrote it")
        const after = settingsJson()
        expect(after.hooks.Stop[0].hooks[0].command).toBe(`${command} --extra`)
        expect(after.hooks.SessionStart).toBeUndefined()
        expect(manifestJson().claude_hooks).toHaveLength(1)
      })
    )
  )

  it.effect("status fails when the hooks were removed, or all hooks are disabled in settings.json", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const doc = settingsJson()
        Fs.writeFileSync(settingsFile(), JSON.stringify({ ...doc, disableAllHooks: true }))
        const disabled = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(disabled.detail).toBe(
          `${settingsFile()} sets "disableAllHooks": true, so Claude Code runs none of blctx's hooks`
        )
        const { SessionEnd: _end, ...rest } = doc.hooks
        Fs.writeFileSync(settingsFile(), JSON.stringify({ ...doc, hooks: rest }))
        const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(missing.detail).toBe(`blctx's SessionEnd hook is no longer in ${settingsFile()} (removed after install)`)
        // A reinstall puts it back, same generation.
        const generation = manifestJson().claude_hooks[0].generation
        expect((yield* step.install(runOf("install"))).detail).toBe(installedDetail())
        expect(manifestJson().claude_hooks[0].generation).toBe(generation)
      })
    )
  )
})

describe("claude_hooks: the recorded choice is Claude Code's own", () => {
  it.effect("declining is recorded apart from Codex's, passes, and takes out hooks an earlier install wrote", () =>
    Effect.gen(function* () {
      yield* checkAfter("install", "install")
      const declined = yield* checkAfter("install", "decline")
      expect(declined).toEqual({
        status: "passed",
        detail: `${CLAUDE_DECLINED_DETAIL}; removed blctx's hooks from ${settingsFile()}`,
        remediation: undefined
      })
      expect(manifestJson().choices).toEqual({ claude_hooks: "declined" })
      expect(yield* checkAfter("status", "install")).toEqual({
        status: "passed",
        detail: CLAUDE_DECLINED_DETAIL,
        remediation: undefined
      })
      expect(yield* checkAfter("install", "default")).toMatchObject({ detail: CLAUDE_DECLINED_DETAIL })
      const asked = yield* checkAfter("install", "install")
      expect(asked).toEqual({ status: "passed", detail: installedDetail(), remediation: undefined })
      expect(manifestJson().choices).toEqual({ claude_hooks: "installed" })
    })
  )
})

const capture = (over: Partial<ConstructorParameters<typeof CaptureStatus>[0]> = {}) =>
  new CaptureStatus({
    events: { SessionStart: 1, UserPromptSubmit: 1, Stop: 1, SessionEnd: 1 },
    pending: 0,
    null_paths: 0,
    errors: 0,
    refused: 0,
    indexed_sessions: 1,
    last_event_at: "2026-03-01T10:05:00.000Z",
    last_error: null,
    ...over
  })

const daemonWith = (status: CaptureStatus): FakeWorld =>
  makeWorld({
    pid: 4242,
    answering: true,
    client: { ContextStatus: () => Effect.succeed({ capture: status } as unknown as ContextStatusResponse) }
  })

describe("claude_hooks doctor", () => {
  it.effect("is green when the hooks are in place and capture works end to end", () =>
    withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          expect((yield* diagnoseOf(step, runOf("doctor"))).detail).toBe(
            "4 hooks in place; events: SessionStart 1, UserPromptSubmit 1, Stop 1, SessionEnd 1; 1 captured session indexed; last event at 2026-03-01T10:05:00.000Z"
          )
        }),
      { world: daemonWith(capture()) }
    )
  )

  it.effect("names what is missing: event types, pending and failed captures, removed hooks", () =>
    withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          Fs.writeFileSync(settingsFile(), "{}")
          const failed = failureOf(yield* Effect.either(diagnoseOf(step, runOf("doctor"))))
          expect(failed.detail).toBe(
            `blctx's ${EVENTS} hooks are no longer in ${settingsFile()} (removed after install); no Stop event has arrived; 2 captures pending; 1 captured session still without a transcript path from Claude Code; 1 capture error (last: gone)`
          )
          expect(failed.remediation).toContain("Use Claude Code as usual")
        }),
      {
        world: daemonWith(
          capture({
            events: { SessionStart: 1, UserPromptSubmit: 1, Stop: 0, SessionEnd: 1 },
            pending: 2,
            null_paths: 1,
            errors: 1,
            last_error: "gone"
          })
        )
      }
    )
  )
})

describe("claude_hooks uninstall", () => {
  it.effect("removes the hooks from the file they were written to, after CLAUDE_CONFIG_DIR changed", () => {
    const first = NodePath.join(fresh.home(), "claude-first")
    const second = NodePath.join(fresh.home(), "claude-second")
    Fs.mkdirSync(first, { recursive: true })
    Fs.writeFileSync(settingsFile(first), renderHooksDocument(THEIRS))
    return Effect.gen(function* () {
      yield* withStep((step) => step.install(runOf("install")), { claudeHome: first })
      yield* withStep(
        (step) =>
          Effect.gen(function* () {
            const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
            expect(missing.detail).toBe(`blctx's hooks are not installed in ${settingsFile(second)}`)
            const removed = yield* step.uninstall(runOf("uninstall"))
            expect(removed.detail).toBe(`removed blctx's hooks from ${settingsFile(first)}`)
            expect(settingsJson(first)).toEqual(THEIRS)
            expect(manifestJson().claude_hooks).toBeUndefined()
          }),
        { claudeHome: second }
      )
    })
  })
})
