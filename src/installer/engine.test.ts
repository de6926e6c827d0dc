import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import type { Check, Report } from "../domain/report.js"
import { STEP_IDS, type StepId } from "../domain/step-id.js"
import { NO_DEEPER_CHECK, type RunRequest, runSteps, validateRequest } from "./engine.js"
import { Renderer } from "./renderer.js"
import { fail, type Step, StepFailure } from "./step.js"

/** Records what the engine called, so tests can prove what ran and what did not. */
const makeSteps = (
  calls: Array<string>,
  failing: ReadonlySet<string> = new Set(),
  dying: ReadonlySet<string> = new Set()
) => {
  const requires: Partial<Record<StepId, ReadonlyArray<StepId>>> = {
    background_service: ["data_directory"],
    history_index: ["background_service", "session_discovery"],
    service_health: ["background_service"],
    history_retrieval: ["history_index", "service_health"],
    session_discovery: ["data_directory"]
  }
  const act = (id: StepId, what: string) =>
    Effect.suspend(() => {
      calls.push(`${what}:${id}`)
      if (dying.has(`${what}:${id}`)) return Effect.die(new Error("boom"))
      return failing.has(`${what}:${id}`)
        ? Effect.fail(fail(`${id} ${what} failed`, `fix ${id}`))
        : Effect.succeed({ detail: `${id} ${what} ok` })
    })
  return STEP_IDS.map(
    (id): Step => ({
      id,
      title: id,
      requires: requires[id] ?? [],
      install: () => act(id, "install"),
      verify: () => act(id, "verify"),
      ...(id === "data_directory" ? { diagnose: () => act(id, "diagnose") } : {}),
      uninstall: () => act(id, "uninstall")
    })
  )
}

const RecordingRenderer = (events: Array<string>) =>
  Layer.succeed(Renderer, {
    begin: (command, rows) => Effect.sync(() => events.push(`begin:${command}:${rows.length}`)),
    started: (id) => Effect.sync(() => events.push(`started:${id}`)),
    progress: () => Effect.void,
    finished: (check) => Effect.sync(() => events.push(`finished:${check.id}:${check.status}`)),
    end: (report) => Effect.sync(() => events.push(`end:${report.exit_code}`))
  })

const request = (over: Partial<RunRequest>): RunRequest => ({
  command: "install",
  selected: null,
  noHistory: false,
  purge: false,
  hooks: "install",
  ...over
})

const run = (steps: ReadonlyArray<Step>, req: RunRequest, events: Array<string> = []) =>
  runSteps(steps, req).pipe(Effect.provide(RecordingRenderer(events)))

const statusOf = (report: Report) => Object.fromEntries(report.checks.map((c: Check) => [c.id, c.status]))

describe("runSteps", () => {
  it.effect("install runs install then verify for every step, in display order, and is ready when all pass", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const report = yield* run(makeSteps(calls), request({}))
      expect(report.checks.map((c) => c.id)).toEqual([...STEP_IDS])
      expect(calls.slice(0, 4)).toEqual([
        "install:data_directory",
        "verify:data_directory",
        "install:background_service",
        "verify:background_service"
      ])
      expect(report.ready).toBe(true)
      expect(report.exit_code).toBe(0)
      expect(report.selected_step).toBeNull()
    })
  )

  it.effect("a failed prerequisite blocks its dependents without running them", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const report = yield* run(makeSteps(calls, new Set(["install:background_service"])), request({}))
      const s = statusOf(report)
      expect(s.background_service).toBe("failed")
      expect(s.service_health).toBe("blocked")
      expect(s.history_index).toBe("blocked")
      expect(s.history_retrieval).toBe("blocked")
      expect(s.codex_mcp).toBe("passed")
      expect(calls.some((c) => c.endsWith(":service_health") || c.endsWith(":history_index"))).toBe(false)
      const blocked = report.checks.find((c) => c.id === "service_health")
      expect(blocked?.detail).toContain("background_service")
      expect(blocked?.remediation).toContain("background_service")
      expect(report.ready).toBe(false)
      expect(report.exit_code).toBe(1)
    })
  )

  it.live("status and doctor run independent checks at once; a check waits for its prerequisites", () =>
    Effect.gen(function* () {
      for (const command of ["status", "doctor"] as const) {
        const calls: Array<string> = []
        // codex_mcp cannot finish before claude_mcp has started: one after the other, it never would.
        const claudeStarted = yield* Deferred.make<void>()
        const steps = makeSteps(calls, new Set(["verify:background_service"])).map(
          (step): Step =>
            step.id === "codex_mcp"
              ? {
                  ...step,
                  verify: () => Effect.zipRight(Deferred.await(claudeStarted), Effect.succeed({ detail: "ok" }))
                }
              : step.id === "claude_mcp"
                ? { ...step, verify: () => Effect.as(Deferred.succeed(claudeStarted, undefined), { detail: "ok" }) }
                : step
        )
        const events: Array<string> = []
        const report = yield* runSteps(steps, request({ command })).pipe(
          Effect.provide(RecordingRenderer(events)),
          Effect.timeoutFail({
            duration: "5 seconds",
            onTimeout: () => new Error(`${command} ran one check at a time`)
          })
        )
        const s = statusOf(report)
        expect(s.codex_mcp).toBe("passed")
        expect(s.claude_mcp).toBe("passed")
        // Dependents still wait: nothing that needs background_service ran after it failed.
        expect(s.service_health).toBe("blocked")
        expect(s.history_retrieval).toBe("blocked")
        expect(calls.some((c) => c.endsWith(":service_health"))).toBe(false)
        expect(calls.indexOf("verify:data_directory")).toBe(0)
        // The report lists every check in display order, whatever order they finished in.
        expect(report.checks.map((c) => c.id)).toEqual(STEP_IDS)
      }
    })
  )

  it.effect("status and doctor never call install; doctor adds the deeper checks", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      yield* run(makeSteps(calls), request({ command: "status" }))
      expect(calls.filter((c) => !c.startsWith("verify:"))).toEqual([])
      calls.length = 0
      yield* run(makeSteps(calls), request({ command: "doctor" }))
      expect(calls.filter((c) => c.startsWith("install:"))).toEqual([])
      expect(calls).toContain("diagnose:data_directory")
    })
  )

  it.effect("--step on install runs the prerequisites too; ready is false even when all pass", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const report = yield* run(makeSteps(calls), request({ selected: "service_health" }))
      expect(report.checks.map((c) => c.id)).toEqual(["data_directory", "background_service", "service_health"])
      expect(report.checks.find((c) => c.id === "service_health")?.dependencies).toEqual(["background_service"])
      expect(report.ready).toBe(false)
      expect(report.exit_code).toBe(0)
      expect(report.selected_step).toBe("service_health")
    })
  )

  it.effect("--step on status verifies only the selected step", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const report = yield* run(
        makeSteps(calls, new Set(["verify:service_health"])),
        request({ command: "status", selected: "service_health" })
      )
      expect(calls).toEqual(["verify:service_health"])
      expect(report.checks.map((c) => c.status)).toEqual(["failed"])
      expect(report.exit_code).toBe(1)
    })
  )

  it.effect("--no-history skips exactly the three history steps and only they can be skipped", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const report = yield* run(makeSteps(calls), request({ noHistory: true }))
      const skipped = report.checks.filter((c) => c.status === "skipped")
      expect(skipped.map((c) => c.id)).toEqual(["session_discovery", "history_index", "history_retrieval"])
      expect(skipped.every((c) => c.skip_reason === "no_history")).toBe(true)
      expect(calls.some((c) => c.includes("history") || c.includes("session_discovery"))).toBe(false)
      expect(report.ready).toBe(true)
    })
  )

  it.effect("selecting a history step with --no-history is a usage error", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(validateRequest(request({ selected: "history_index", noHistory: true })))
      expect(error._tag).toBe("UsageError")
      expect(error.message).toContain("history_index")
    })
  )

  it.effect("a defect inside a step becomes a failed check with a remediation", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const report = yield* run(
        makeSteps(calls, new Set(), new Set(["verify:codex_mcp"])),
        request({ command: "status" })
      )
      const check = report.checks.find((c) => c.id === "codex_mcp")
      expect(check?.status).toBe("failed")
      expect(check?.detail).toContain("boom")
      expect(check?.remediation).toBeDefined()
      expect(report.checks).toHaveLength(STEP_IDS.length)
    })
  )

  it.effect("uninstall tears down in reverse order but reports in display order", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const events: Array<string> = []
      const report = yield* run(makeSteps(calls), request({ command: "uninstall" }), events)
      expect(calls[0]).toBe(`uninstall:${STEP_IDS.at(-1)}`)
      expect(calls.at(-1)).toBe("uninstall:data_directory")
      expect(report.checks.map((c) => c.id)).toEqual([...STEP_IDS])
      expect(report.ready).toBe(false)
      expect(events[0]).toBe(`begin:uninstall:${STEP_IDS.length}`)
      expect(events.at(-1)).toBe("end:0")
    })
  )

  it.effect("the report names its target: codex by default, the one asked for, or all with the targets covered", () =>
    Effect.gen(function* () {
      const codex = yield* run(makeSteps([]), request({ command: "status" }))
      expect([codex.target, codex.targets]).toEqual(["codex", ["codex"]])
      const claude = yield* run(makeSteps([]), request({ command: "status", targets: ["claude"] }))
      expect([claude.target, claude.targets]).toEqual(["claude", ["claude"]])
      const both = yield* run(makeSteps([]), request({ command: "status", targets: ["codex", "claude"] }))
      expect([both.target, both.targets]).toEqual(["all", ["codex", "claude"]])
    })
  )

  it.effect("doctor runs each step's deeper checks and says where there are none, so it differs from status", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const status = yield* run(makeSteps(calls), request({ command: "status" }))
      calls.length = 0
      const doctor = yield* run(makeSteps(calls), request({ command: "doctor" }))
      expect(calls.filter((c) => c.endsWith(":data_directory"))).toEqual([
        "verify:data_directory",
        "diagnose:data_directory"
      ])
      const detail = (r: Report, id: StepId) => r.checks.find((c) => c.id === id)?.detail
      expect(detail(status, "data_directory")).toBe("data_directory verify ok")
      expect(detail(doctor, "data_directory")).toBe(
        "data_directory verify ok; deeper check: data_directory diagnose ok"
      )
      expect(detail(doctor, "codex_mcp")).toBe(`codex_mcp verify ok ${NO_DEEPER_CHECK}`)
      for (const check of doctor.checks) expect(check.detail).not.toBe(detail(status, check.id))
    })
  )

  it.effect("doctor fails a step whose deeper check fails, and reports deeper findings when verify fails", () =>
    Effect.gen(function* () {
      const deeperFails = yield* run(
        makeSteps([], new Set(["diagnose:data_directory"])),
        request({ command: "doctor", selected: "data_directory" })
      )
      expect(deeperFails.checks[0]).toMatchObject({
        status: "failed",
        detail: "deeper check failed: data_directory diagnose failed (status alone passes: data_directory verify ok)",
        remediation: "fix data_directory"
      })
      const bothFail = yield* run(
        makeSteps([], new Set(["verify:data_directory"])),
        request({ command: "doctor", selected: "data_directory" })
      )
      expect(bothFail.checks[0]).toMatchObject({
        status: "failed",
        detail: "data_directory verify failed; deeper check: data_directory diagnose ok",
        remediation: "fix data_directory"
      })
      const noDeeper = yield* run(
        makeSteps([], new Set(["verify:codex_mcp"])),
        request({ command: "doctor", selected: "codex_mcp" })
      )
      expect(noDeeper.checks[0]?.detail).toBe(`codex_mcp verify failed ${NO_DEEPER_CHECK}`)
    })
  )

  it.effect("a failure with a blank detail or remediation is reported with one naming the step and the error", () =>
    Effect.gen(function* () {
      const blank = (errorTag?: string): Step => ({
        id: "service_health",
        title: "service_health",
        requires: [],
        install: () => Effect.fail(new StepFailure({ detail: "", remediation: "Run: blctx status" })),
        verify: () =>
          Effect.fail(
            new StepFailure({ detail: "  ", remediation: "", ...(errorTag === undefined ? {} : { errorTag }) })
          ),
        uninstall: () => Effect.succeed({ detail: "ok" })
      })
      const tagged = yield* run([blank("TimeoutException")], request({ command: "status" }))
      expect(tagged.checks[0]).toMatchObject({
        status: "failed",
        detail: "service_health verify failed with TimeoutException and no detail"
      })
      expect(tagged.checks[0]?.remediation).toContain("Re-run with --json")
      const untagged = yield* run([blank()], request({ command: "install" }))
      expect(untagged.checks[0]).toMatchObject({
        status: "failed",
        detail: "service_health install failed with StepFailure and no detail",
        remediation: "Run: blctx status"
      })
      const doctor = yield* run([blank("DaemonUnavailable")], request({ command: "doctor" }))
      expect(doctor.checks[0]?.detail).toBe(
        `service_health verify failed with DaemonUnavailable and no detail ${NO_DEEPER_CHECK}`
      )
    })
  )
})

describe("the checklist's heading", () => {
  it.effect("is the command and agent run, or the agents a status of every installed one covers", () =>
    Effect.gen(function* () {
      const headings: Array<string> = []
      const renderer = Layer.succeed(Renderer, {
        begin: (_command, _rows, heading) => Effect.sync(() => headings.push(heading)),
        started: () => Effect.void,
        progress: () => Effect.void,
        finished: () => Effect.void,
        end: () => Effect.void
      })
      const run = (over: Partial<RunRequest>) => runSteps(makeSteps([]), request(over)).pipe(Effect.provide(renderer))
      yield* run({ targets: ["claude"] })
      yield* run({ command: "doctor", targets: ["claude"], targetNamed: true })
      yield* run({ command: "status", targets: ["codex", "claude"], targetNamed: false })
      yield* run({ command: "uninstall", targets: ["claude"] })
      expect(headings).toEqual([
        "blctx install claude",
        "blctx doctor claude",
        "blctx status (Codex and Claude Code)",
        "blctx uninstall claude"
      ])
    })
  )
})
