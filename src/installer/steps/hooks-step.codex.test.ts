import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import toml from "toml"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { HOOK_EVENTS } from "../../capture/hook-event.js"
import { CodexAppServer, type CodexHook, type CodexHooksListing } from "../../codex/codex-app-server.js"
import { CodexNotFound } from "../../codex/codex-cli.js"
import { renderHooksDocument } from "../../codex/hooks-file.js"
import type { Check } from "../../domain/report.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { CaptureStatus } from "../../retrieval/capture-status.js"
import type { ContextStatusResponse } from "../../retrieval/context-status.js"
import { AGENTS } from "../agents/agents.js"
import { APPROVE_HOOKS } from "../agents/codex.js"
import { runSteps } from "../engine.js"
import { Renderer } from "../renderer.js"
import type { HooksChoice, Step, StepFailure } from "../step.js"
import { declinedDetail, hooksStep } from "./hooks-step.js"

const codexHooksStep = hooksStep(AGENTS.codex)
const DECLINED_DETAIL = declinedDetail(AGENTS.codex)

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

/**
 * Codex as `hooks/list` reports a Codex home, read from the real files: every command handler of
 * hooks.json with its key (`file:event:group:handler`), a hash of what it runs, and the trust and
 * enabled state of `[hooks.state."<key>"]` in config.toml ("modified" once the hash changed).
 */
interface FakeCodex {
  installed: boolean
  /** Commands Codex leaves out of its answer (as if it could not load them). */
  hidden: Set<string>
  calls: number
}
const makeFakeCodex = (): FakeCodex => ({ installed: true, hidden: new Set(), calls: 0 })

const snake = (event: string) => event.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()
const camel = (event: string) => `${event.charAt(0).toLowerCase()}${event.slice(1)}`

const listingOf = (codexHome: string, codex: FakeCodex): CodexHooksListing => {
  const file = `${codexHome}/hooks.json`
  const config = `${codexHome}/config.toml`
  const state: Record<string, { trusted_hash?: string; enabled?: boolean }> = Fs.existsSync(config)
    ? (toml.parse(Fs.readFileSync(config, "utf8")).hooks?.state ?? {})
    : {}
  if (!Fs.existsSync(file)) return { hooks: [], warnings: [], errors: [] }
  const doc = JSON.parse(Fs.readFileSync(file, "utf8"))
  const hooks: Array<CodexHook> = []
  for (const [event, groups] of Object.entries<Array<{ hooks?: Array<{ command?: string; timeout?: number }> }>>(
    doc.hooks ?? {}
  )) {
    groups.forEach((group, g) => {
      ;(group.hooks ?? []).forEach((handler, h) => {
        if (handler.command === undefined || codex.hidden.has(handler.command)) return
        const key = `${file}:${snake(event)}:${g}:${h}`
        const currentHash = `sha256:${createHash("sha256").update(`${event}\n${handler.command}\n${handler.timeout}`).digest("hex")}`
        const trusted = state[key]?.trusted_hash
        hooks.push({
          key,
          eventName: camel(event),
          command: handler.command,
          timeoutSec: handler.timeout ?? 600,
          enabled: state[key]?.enabled !== false,
          currentHash,
          trustStatus: trusted === undefined ? "untrusted" : trusted === currentHash ? "trusted" : "modified",
          sourcePath: file
        })
      })
    })
  }
  return { hooks, warnings: [], errors: [] }
}

const FakeAppServer = (codex: FakeCodex) =>
  Layer.succeed(CodexAppServer, {
    listSkills: () => Effect.dieMessage("not used by codex_hooks"),
    listHooks: (codexHome) =>
      Effect.suspend(() => {
        codex.calls++
        return codex.installed
          ? Effect.succeed(listingOf(codexHome, codex))
          : Effect.fail(new CodexNotFound({ searched: ["/usr/bin", "/bin"] }))
      })
  })

/** What a person does in Codex's /hooks: trust blctx's entries (those that name this installation). */
const trust = (
  codexHome: string,
  codex: FakeCodex,
  options: { except?: ReadonlyArray<string>; extra?: string } = {}
) => {
  const tables = listingOf(codexHome, codex)
    .hooks.filter((h) => h.command?.includes(INSTALLATION) && !(options.except ?? []).includes(h.eventName))
    .map((h) => `[hooks.state."${h.key}"]\ntrusted_hash = "${h.currentHash}"\n`)
  Fs.writeFileSync(`${codexHome}/config.toml`, `${options.extra ?? ""}${tables.join("")}`)
}

const hookEntry = (name = "blctx-hook.mjs") => {
  const path = NodePath.join(fresh.home(), "pkg", "dist", "bin", name)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, "")
  return path
}

const inputs = (codexHome?: string) => {
  const base = pathInputs(fresh.home())
  const home = codexHome ?? base.CODEX_HOME
  Fs.mkdirSync(home, { recursive: true })
  return { ...base, CODEX_HOME: home }
}

const layerOf = (codex: FakeCodex, world: FakeWorld, codexHome?: string, hook = hookEntry()) =>
  Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook,
      skill: process.execPath
    }),
    FakeConnector(world, resolvePaths(inputs(codexHome))),
    FakeAppServer(codex)
  ).pipe(Layer.provideMerge(Paths.layerFrom(inputs(codexHome))), Layer.provideMerge(NodeSafeFsLive))

interface Setup {
  codex?: FakeCodex
  world?: FakeWorld
  codexHome?: string
  /** The hook handler's file name (default blctx-hook.mjs). */
  hook?: string
}
const withStep = <A, E>(use: (step: Step) => Effect.Effect<A, E>, setup: Setup = {}) =>
  Effect.flatMap(codexHooksStep, use).pipe(
    Effect.provide(
      layerOf(setup.codex ?? makeFakeCodex(), setup.world ?? makeWorld(), setup.codexHome, hookEntry(setup.hook))
    )
  )

const SilentRenderer = Layer.succeed(Renderer, {
  begin: () => Effect.void,
  started: () => Effect.void,
  progress: () => Effect.void,
  finished: () => Effect.void,
  end: () => Effect.void
})

/** One command over the codex_hooks step through the engine, as `blctx <command> --json` would run it. */
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

const codexHome = () => resolvePaths(inputs()).codexHome
const hooksFile = (home = codexHome()) => `${home}/hooks.json`
const hooksJson = (home?: string) => JSON.parse(Fs.readFileSync(hooksFile(home), "utf8"))
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const recordedChoice = () => manifestJson().choices
const failureOf = <A>(result: Either.Either<A, StepFailure | unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}
const EVENTS = "SessionStart, UserPromptSubmit, Stop, SessionEnd"
const pendingDetail = (home = codexHome(), trusted = 0) =>
  `4 hooks (${EVENTS}) in ${hooksFile(home)}; ${APPROVE_HOOKS} (${trusted} of 4 trusted; waiting: ${EVENTS})`

/** A person's hooks.json: a description, a matcher, extra fields, an event blctx does not use. */
const THEIRS = {
  description: "my hooks",
  hooks: {
    Stop: [{ matcher: "", hooks: [{ type: "command", command: "notify-send done", timeout: 7, statusMessage: "ok" }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh" }] }]
  }
}

describe("codex_hooks install", () => {
  it.effect("writes one group per event into a new hooks.json (0600), records it first, and passes pending trust", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const installed = yield* step.install(runOf("install"))
        expect(installed.detail).toBe(pendingDetail())
        const record = manifestJson().codex_hooks
        expect(record).toHaveLength(1)
        expect(record[0]).toMatchObject({ codex_home: codexHome(), hooks_file: hooksFile() })
        const generation: string = record[0].generation
        expect(generation).toMatch(/^[0-9a-f-]{36}$/)
        const doc = hooksJson()
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
        expect(Fs.statSync(hooksFile()).mode & 0o777).toBe(0o600)
        // Trust is the person's: blctx wrote nothing into config.toml.
        expect(Fs.existsSync(`${codexHome()}/config.toml`)).toBe(false)
        expect((yield* step.verify(runOf("status"))).detail).toBe(pendingDetail())
      })
    )
  )

  it.effect("a reinstall of current hooks keeps the generation and the file, so Codex's trust stays", () => {
    const codex = makeFakeCodex()
    return withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          trust(codexHome(), codex)
          const fileBefore = Fs.readFileSync(hooksFile(), "utf8")
          const generation = manifestJson().codex_hooks[0].generation
          const again = yield* step.install(runOf("install"))
          expect(again.detail).toBe(`4 hooks (${EVENTS}) in ${hooksFile()}; trusted in Codex (4 of 4)`)
          expect(Fs.readFileSync(hooksFile(), "utf8")).toBe(fileBefore)
          expect(manifestJson().codex_hooks[0].generation).toBe(generation)
        }),
      { codex }
    )
  })

  it.effect("keeps a person's hooks, fields and mode through install and uninstall", () => {
    const original = renderHooksDocument(THEIRS)
    Fs.writeFileSync(hooksFile(), original, { mode: 0o644 })
    Fs.chmodSync(hooksFile(), 0o644)
    return withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const doc = hooksJson()
        expect(Object.keys(doc)).toEqual(["description", "hooks"])
        expect(Object.keys(doc.hooks)).toEqual(["Stop", "PreToolUse", "SessionStart", "UserPromptSubmit", "SessionEnd"])
        expect(doc.hooks.Stop[0]).toEqual(THEIRS.hooks.Stop[0])
        expect(doc.hooks.Stop).toHaveLength(2)
        expect(doc.hooks.PreToolUse).toEqual(THEIRS.hooks.PreToolUse)
        expect(Fs.statSync(hooksFile()).mode & 0o777).toBe(0o644)

        const removed = yield* step.uninstall(runOf("uninstall"))
        expect(removed.detail).toBe(`removed blctx's hooks from ${hooksFile()}`)
        expect(Fs.readFileSync(hooksFile(), "utf8")).toBe(original)
        expect(Fs.statSync(hooksFile()).mode & 0o777).toBe(0o644)
        expect(manifestJson().codex_hooks).toBeUndefined()
        const again = yield* step.uninstall(runOf("uninstall"))
        expect(again.detail).toBe("nothing to remove: blctx has no hooks registered with Codex")
      })
    )
  })

  it.effect("refuses hooks defined inline in config.toml, and changes nothing; trust state alone is fine", () => {
    const config = `${codexHome()}/config.toml`
    Fs.writeFileSync(config, `[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = "command"\ncommand = "x"\n`)
    return withStep((step) =>
      Effect.gen(function* () {
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `${config} defines hooks inline ([hooks.SessionStart]); Codex would load them beside ${hooksFile()}, so blctx added nothing: consolidate them into hooks.json first`
        )
        expect(refused.remediation).toBe(
          `Move the definitions under [hooks] in ${config} into ${hooksFile()} (keep [hooks.state.*] where it is: that is Codex's trust), then run: blctx install codex --step codex_hooks`
        )
        expect(Fs.existsSync(hooksFile())).toBe(false)
        expect(manifestJson().codex_hooks).toBeUndefined()

        Fs.writeFileSync(config, `[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:0"\n`)
        expect((yield* step.install(runOf("install"))).detail).toBe(pendingDetail())
      })
    )
  })

  it.effect("refuses a blctx command someone changed, in install, status and uninstall, and keeps it", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const doc = hooksJson()
        const wrote: string = doc.hooks.SessionStart[0].hooks[0].command
        const changed = `${wrote} --verbose`
        doc.hooks.SessionStart[0].hooks[0].command = changed
        Fs.writeFileSync(hooksFile(), renderHooksDocument(doc))
        const before = Fs.readFileSync(hooksFile(), "utf8")

        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `blctx's SessionStart hook in ${hooksFile()} was changed after blctx wrote it (it now runs ${changed}; blctx wrote ${wrote}); it was left untouched`
        )
        expect(refused.remediation).toContain(`delete that handler from ${hooksFile()}, then run: blctx install codex`)
        expect(Fs.readFileSync(hooksFile(), "utf8")).toBe(before)
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(refused.detail)

        const kept = failureOf(yield* Effect.either(step.uninstall(runOf("uninstall"))))
        expect(kept.detail).toBe(`removed blctx's hooks from ${hooksFile()}; ${refused.detail}`)
        expect(kept.remediation).toBe(`If you no longer need it, delete that handler from ${hooksFile()} yourself`)
        expect(hooksJson().hooks).toEqual({
          SessionStart: [{ hooks: [{ type: "command", command: changed, timeout: 5 }] }]
        })
        // Still recorded: a later install keeps refusing rather than calling it someone else's.
        expect(manifestJson().codex_hooks).toHaveLength(1)
        expect(failureOf(yield* Effect.either(step.install(runOf("install")))).detail).toBe(refused.detail)
      })
    )
  )

  it.effect("a malformed hooks.json is a clear error that changes nothing", () => {
    const broken = `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": 3}]}]}}`
    Fs.writeFileSync(hooksFile(), broken)
    return withStep((step) =>
      Effect.gen(function* () {
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `${hooksFile()} is not a hooks file Codex can read: hooks.Stop[0].hooks[0].command must be a string; nothing was changed`
        )
        expect(refused.remediation).toBe(
          "Fix it (Codex cannot load any hook from it as it is), then run: blctx install codex --step codex_hooks"
        )
        Fs.writeFileSync(hooksFile(), "{ not json")
        expect(failureOf(yield* Effect.either(step.install(runOf("install")))).detail).toMatch(
          /hooks\.json is not a hooks file Codex can read: it is not valid JSON \(/
        )
        expect(Fs.readFileSync(hooksFile(), "utf8")).toBe("{ not json")
        expect(manifestJson().codex_hooks).toBeUndefined()
      })
    )
  })

  it.effect("refuses a symlinked hooks.json and leaves the link and its target as they are", () => {
    const target = NodePath.join(fresh.home(), "shared-hooks.json")
    Fs.writeFileSync(target, renderHooksDocument(THEIRS))
    Fs.symlinkSync(target, hooksFile())
    return withStep((step) =>
      Effect.gen(function* () {
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `${hooksFile()} is a symbolic link; blctx edits hooks.json only as a regular file, so nothing was changed`
        )
        expect(Fs.lstatSync(hooksFile()).isSymbolicLink()).toBe(true)
        expect(Fs.readFileSync(target, "utf8")).toBe(renderHooksDocument(THEIRS))
        expect(manifestJson().codex_hooks).toBeUndefined()
      })
    )
  })

  it.effect.skipIf(process.getuid?.() !== 0)(
    "(as root) refuses a CODEX_HOME that links into another user's folder, as codex_skills does, writing nothing",
    () => {
      const theirs = NodePath.join(fresh.home(), "theirs", "codex")
      Fs.mkdirSync(theirs, { recursive: true, mode: 0o755 })
      Fs.chownSync(NodePath.dirname(theirs), 65_534, 65_534)
      Fs.chownSync(theirs, 65_534, 65_534)
      const link = NodePath.join(fresh.home(), "codex-link")
      Fs.symlinkSync(theirs, link)
      return withStep(
        (step) =>
          Effect.gen(function* () {
            const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
            expect(refused.detail).toContain("owned by user 65534")
            expect(refused.remediation).toContain("blctx install codex --step codex_hooks")
            expect(Fs.existsSync(NodePath.join(theirs, "hooks.json"))).toBe(false)
          }),
        { codexHome: link }
      )
    }
  )

  it.effect("fails when Codex does not load the hooks, and when codex is missing", () => {
    const codex = makeFakeCodex()
    return withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          const stop: string = hooksJson().hooks.Stop[0].hooks[0].command
          codex.hidden.add(stop)
          const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(missing.detail).toBe(`Codex does not load blctx's Stop hook from ${hooksFile()}`)
          codex.installed = false
          const noCodex = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(noCodex.errorTag).toBe("CodexNotFound")
          expect(noCodex.remediation).toBe(
            "Install Codex: npm install -g @openai/codex (or put codex on PATH), then run: blctx install codex --step codex_hooks"
          )
        }),
      { codex }
    )
  })
})

describe("codex_hooks when the installation moved", () => {
  it.effect("entries written for another hook program fail status; install replaces them with a new generation", () => {
    Fs.writeFileSync(hooksFile(), renderHooksDocument(THEIRS))
    return Effect.gen(function* () {
      yield* withStep((step) => step.install(runOf("install")), { hook: "old-blctx-hook.mjs" })
      const old = manifestJson().codex_hooks[0]
      yield* withStep((step) =>
        Effect.gen(function* () {
          const outdated = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(outdated.detail).toContain(
            `run ${old.entries[0].command} (and the like), not what this installation writes`
          )
          expect(outdated.remediation).toBe("Run: blctx install codex --step codex_hooks")

          expect((yield* step.install(runOf("install"))).detail).toBe(pendingDetail())
          const record = manifestJson().codex_hooks
          expect(record).toHaveLength(1)
          expect(record[0].generation).not.toBe(old.generation)
          const commands = JSON.stringify(hooksJson())
          expect(commands).not.toContain("old-blctx-hook.mjs")
          expect(commands).toContain(record[0].generation)
          expect(hooksJson().hooks.Stop[0]).toEqual(THEIRS.hooks.Stop[0])
          expect(hooksJson().hooks.Stop).toHaveLength(2)
        })
      )
    })
  })
})

describe("codex_hooks status", () => {
  it.effect("passes once trusted, and says which hooks still wait for approval", () => {
    const codex = makeFakeCodex()
    return withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          trust(codexHome(), codex, { except: ["stop"], extra: `model = "gpt"\n` })
          expect((yield* step.verify(runOf("status"))).detail).toBe(
            `4 hooks (${EVENTS}) in ${hooksFile()}; ${APPROVE_HOOKS} (3 of 4 trusted; waiting: Stop)`
          )
          trust(codexHome(), codex)
          expect((yield* step.verify(runOf("status"))).detail).toBe(
            `4 hooks (${EVENTS}) in ${hooksFile()}; trusted in Codex (4 of 4)`
          )
        }),
      { codex }
    )
  })

  it.effect("fails for an entry removed from hooks.json, a disabled one, and a hooks.json that is gone", () => {
    const codex = makeFakeCodex()
    return withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          const full = hooksJson()
          const { SessionEnd: _removed, ...rest } = full.hooks
          Fs.writeFileSync(hooksFile(), renderHooksDocument({ hooks: rest }))
          const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(missing.detail).toBe(`blctx's SessionEnd hook is no longer in ${hooksFile()} (removed after install)`)
          expect(missing.remediation).toBe("Run: blctx install codex --step codex_hooks")

          Fs.writeFileSync(hooksFile(), renderHooksDocument(full))
          Fs.writeFileSync(
            `${codexHome()}/config.toml`,
            `[hooks.state."${hooksFile()}:user_prompt_submit:0:0"]\nenabled = false\n`
          )
          const disabled = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(disabled.detail).toBe("blctx's UserPromptSubmit hook is disabled in Codex, so it never runs")
          expect(disabled.remediation).toContain(`[hooks.state."${hooksFile()}:user_prompt_submit:0:0"]`)

          Fs.rmSync(hooksFile())
          const gone = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(gone.detail).toBe(`${hooksFile()} is gone, so Codex runs none of blctx's hooks`)
        }),
      { codex }
    )
  })
})

describe("codex_hooks: install and status agree on the recorded choice", () => {
  it.effect("without a decision (the non-interactive default) both pass the same way, pending trust", () =>
    Effect.gen(function* () {
      const installed = yield* checkAfter("install", "default")
      const status = yield* checkAfter("status", "install")
      expect(installed).toEqual(status)
      expect(installed).toEqual({ status: "passed", detail: pendingDetail(), remediation: undefined })
    })
  )

  it.effect("declining is recorded, passes, and takes out hooks an earlier install wrote", () =>
    Effect.gen(function* () {
      yield* checkAfter("install", "install")
      const declined = yield* checkAfter("install", "decline")
      expect(declined).toEqual({
        status: "passed",
        detail: `${DECLINED_DETAIL}; removed blctx's hooks from ${hooksFile()}`,
        remediation: undefined
      })
      expect(hooksJson()).toEqual({ hooks: {} })
      expect(recordedChoice()).toEqual({ hooks: "declined" })
      const status = yield* checkAfter("status", "install")
      expect(status).toEqual({ status: "passed", detail: DECLINED_DETAIL, remediation: undefined })
      // The default (nobody asked) keeps the decline.
      expect(yield* checkAfter("install", "default")).toEqual(status)
      expect(Fs.readFileSync(hooksFile(), "utf8")).toBe(renderHooksDocument({ hooks: {} }))

      // Asking again replaces the decline, so status agrees with install, and remembers the answer.
      const asked = yield* checkAfter("install", "install")
      expect(asked.status).toBe("passed")
      expect(recordedChoice()).toEqual({ hooks: "installed" })
      expect(yield* checkAfter("status", "install")).toEqual(asked)
    })
  )

  it.effect("doctor with the hooks declined has nothing deeper to say and passes", () =>
    Effect.gen(function* () {
      yield* checkAfter("install", "decline")
      const doctor = yield* checkAfter("doctor", "install")
      expect(doctor).toEqual({
        status: "passed",
        detail: `${DECLINED_DETAIL}; deeper check: optional hooks declined: nothing to diagnose`,
        remediation: undefined
      })
    })
  )
})

const capture = (over: Partial<ConstructorParameters<typeof CaptureStatus>[0]> = {}) =>
  new CaptureStatus({
    events: { SessionStart: 2, UserPromptSubmit: 3, Stop: 3, SessionEnd: 1 },
    pending: 0,
    null_paths: 0,
    errors: 0,
    refused: 0,
    indexed_sessions: 2,
    last_event_at: "2026-03-01T10:05:00.000Z",
    last_error: null,
    ...over
  })

/** A running daemon whose ContextStatus carries this capture status. */
const daemonWith = (status: CaptureStatus): FakeWorld =>
  makeWorld({
    pid: 4242,
    answering: true,
    client: { ContextStatus: () => Effect.succeed({ capture: status } as unknown as ContextStatusResponse) }
  })

describe("codex_hooks doctor", () => {
  it.effect("is green only when every hook is trusted and capture works end to end", () => {
    const codex = makeFakeCodex()
    return withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          trust(codexHome(), codex)
          expect((yield* diagnoseOf(step, runOf("doctor"))).detail).toBe(
            "4 hooks trusted; events: SessionStart 2, UserPromptSubmit 3, Stop 3, SessionEnd 1; 2 captured sessions indexed; last event at 2026-03-01T10:05:00.000Z"
          )
        }),
      { codex, world: daemonWith(capture()) }
    )
  })

  it.effect("names exactly what is missing: trust, event types, pending and failed captures", () => {
    const codex = makeFakeCodex()
    const status = capture({
      events: { SessionStart: 1, UserPromptSubmit: 0, Stop: 2, SessionEnd: 1 },
      pending: 2,
      null_paths: 1,
      errors: 1,
      last_error: "stale generation"
    })
    return withStep(
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          trust(codexHome(), codex, { except: ["sessionStart", "stop"] })
          const failed = failureOf(yield* Effect.either(diagnoseOf(step, runOf("doctor"))))
          expect(failed.detail).toBe(
            "not trusted yet: SessionStart, Stop; no UserPromptSubmit event has arrived; 2 captures pending; 1 captured session still without a transcript path from Codex; 1 capture error (last: stale generation)"
          )
          expect(failed.remediation).toContain("Open Codex, run /hooks and trust the blctx hooks; Use Codex as usual")
        }),
      { codex, world: daemonWith(status) }
    )
  })

  it.effect(
    "a fresh install (hooks awaiting approval, nothing arrived) passes, naming what waits; a silent daemon fails",
    () =>
      Effect.gen(function* () {
        const silent = capture({
          events: { SessionStart: 0, UserPromptSubmit: 0, Stop: 0, SessionEnd: 0 },
          indexed_sessions: 0,
          last_event_at: null
        })
        const codex = makeFakeCodex()
        yield* withStep(
          (step) =>
            Effect.gen(function* () {
              yield* step.install(runOf("install"))
              const fresh = (yield* diagnoseOf(step, runOf("doctor"))).detail
              expect(fresh).toMatch(
                /^0 hooks trusted; events: SessionStart 0, UserPromptSubmit 0, Stop 0, SessionEnd 0; 0 captured sessions indexed; waiting, not a fault: not trusted yet: SessionStart, UserPromptSubmit, Stop, SessionEnd; no SessionStart, UserPromptSubmit, Stop or SessionEnd event has arrived; no captured session is indexed yet; next: Open Codex, run \/hooks and trust the blctx hooks; Use Codex as usual/
              )
              trust(codexHome(), codex)
              expect((yield* diagnoseOf(step, runOf("doctor"))).detail).toMatch(
                /^4 hooks trusted; .*; waiting, not a fault: no SessionStart, UserPromptSubmit, Stop or SessionEnd event has arrived; no captured session is indexed yet; next: Use Codex as usual/
              )
            }),
          { codex, world: daemonWith(silent) }
        )
        yield* withStep(
          (step) =>
            Effect.gen(function* () {
              const failed = failureOf(yield* Effect.either(diagnoseOf(step, runOf("doctor"))))
              expect(failed.detail).toMatch(
                /^capture status not known: blctxd on .* did not answer \(ContextStatus\): DaemonUnavailable: no socket/
              )
            }),
          { codex }
        )
      })
  )
})

describe("codex_hooks uninstall", () => {
  it.effect("removes the hooks from the file they were written to, after CODEX_HOME changed", () => {
    const first = NodePath.join(fresh.home(), "codex-first")
    const second = NodePath.join(fresh.home(), "codex-second")
    Fs.mkdirSync(first, { recursive: true })
    Fs.writeFileSync(hooksFile(first), renderHooksDocument(THEIRS))
    return Effect.gen(function* () {
      yield* withStep((step) => step.install(runOf("install")), { codexHome: first })
      yield* withStep(
        (step) =>
          Effect.gen(function* () {
            const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
            expect(missing.detail).toBe(`blctx's hooks are not installed in ${hooksFile(second)}`)
            const removed = yield* step.uninstall(runOf("uninstall"))
            expect(removed.detail).toBe(`removed blctx's hooks from ${hooksFile(first)}`)
            expect(hooksJson(first)).toEqual(THEIRS)
            expect(manifestJson().codex_hooks).toBeUndefined()
          }),
        { codexHome: second }
      )
    })
  })

  it.effect("forgets a record whose hooks file is gone, and says there was nothing to remove", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        Fs.rmSync(hooksFile())
        const nothing = yield* step.uninstall(runOf("uninstall"))
        expect(nothing.detail).toBe(`nothing to remove: blctx's hooks were already gone from ${hooksFile()}`)
        expect(manifestJson().codex_hooks).toBeUndefined()
      })
    )
  )
})
