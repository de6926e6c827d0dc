import * as Fs from "node:fs"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Check } from "../../domain/report.js"
import { resolvePaths } from "../../paths/paths.js"
import { runSteps } from "../engine.js"
import { Renderer } from "../renderer.js"
import type { HooksChoice } from "../step.js"
import { codexHooksStep } from "./codex-hooks.js"
import { makeHome, makeWorld, pathInputs, stepLayer, writeActiveManifest } from "./service-steps.test-support.js"

let home: string
beforeEach(() => {
  home = makeHome()
  writeActiveManifest(resolvePaths(pathInputs(home)))
})
afterEach(() => Fs.rmSync(home, { recursive: true, force: true }))

const SilentRenderer = Layer.succeed(Renderer, {
  begin: () => Effect.void,
  started: () => Effect.void,
  progress: () => Effect.void,
  finished: () => Effect.void,
  end: () => Effect.void
})

/** Runs one command over the codex_hooks step through the engine, as `blctx <command> --json` would. */
const checkAfter = (command: "install" | "status" | "doctor" | "uninstall", hooks: HooksChoice) =>
  Effect.gen(function* () {
    const step = yield* codexHooksStep
    const report = yield* runSteps([step], { command, selected: null, noHistory: false, purge: false, hooks })
    const check = report.checks[0] as Check
    return { status: check.status, detail: check.detail, remediation: check.remediation }
  }).pipe(Effect.provide(SilentRenderer))

const recordedChoice = () => JSON.parse(Fs.readFileSync(resolvePaths(pathInputs(home)).manifest, "utf8")).choices

describe("codex_hooks: install and status agree", () => {
  it.effect("without a decision (the non-interactive default asks for hooks) both fail the same way", () =>
    Effect.gen(function* () {
      const installed = yield* checkAfter("install", "install")
      const status = yield* checkAfter("status", "install")
      expect(installed).toEqual(status)
      expect(installed.status).toBe("failed")
      expect(installed.detail).toBe("not implemented yet")
      expect(installed.remediation).toContain("blctx install codex --no-hooks")
    }).pipe(Effect.provide(stepLayer(home, makeWorld())))
  )

  it.effect("after an earlier decline, asking for the hooks again is recorded, so status agrees with install", () =>
    Effect.gen(function* () {
      const declined = yield* checkAfter("install", "decline")
      expect(declined.status).toBe("passed")
      expect(yield* checkAfter("status", "install")).toEqual(declined)
      expect(recordedChoice()).toEqual({ hooks: "declined" })

      const asked = yield* checkAfter("install", "install")
      expect(asked.status).toBe("failed")
      expect(yield* checkAfter("status", "install")).toEqual(asked)
      expect(recordedChoice()).toEqual({})
    }).pipe(Effect.provide(stepLayer(home, makeWorld())))
  )

  it.effect("the default choice (nobody asked) keeps what an earlier install recorded", () =>
    Effect.gen(function* () {
      const undecided = yield* checkAfter("install", "default")
      expect(undecided.status).toBe("failed")
      expect(yield* checkAfter("status", "install")).toEqual(undecided)

      yield* checkAfter("install", "decline")
      const kept = yield* checkAfter("install", "default")
      expect(kept.status).toBe("passed")
      expect(yield* checkAfter("status", "install")).toEqual(kept)
      expect(recordedChoice()).toEqual({ hooks: "declined" })
    }).pipe(Effect.provide(stepLayer(home, makeWorld())))
  )

  it.effect("uninstall passes (nothing was installed) and suggests no flag uninstall does not take", () =>
    Effect.gen(function* () {
      const removed = yield* checkAfter("uninstall", "install")
      expect(removed).toEqual({
        status: "passed",
        detail: "nothing to remove: no hooks were installed (hook installation is not built in this version)",
        remediation: undefined
      })
      const failedInstall = yield* checkAfter("install", "install")
      // A complete command, not "rerun with --no-hooks".
      expect(failedInstall.remediation).not.toMatch(/rerun with --/i)
    }).pipe(Effect.provide(stepLayer(home, makeWorld())))
  )
})
