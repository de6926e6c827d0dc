import { Cause, type Context, Data, Deferred, Effect, Either, Option } from "effect"
import { Check, ExitCode, Report, type ReportCommand } from "../domain/report.js"
import { AGENT_TARGETS, type AgentTarget, displayIndex, HISTORY_STEP_IDS, type StepId } from "../domain/step-id.js"
import { checklistHeading } from "./render-text.js"
import { Renderer } from "./renderer.js"
import { type HooksChoice, type Step, StepFailure, type StepOutcome, type StepRun } from "./step.js"

/** A request that names no target is for the first agent (Codex, the one blctx began with). */
const DEFAULT_TARGETS: ReadonlyArray<AgentTarget> = [AGENT_TARGETS[0]]

export interface RunRequest {
  readonly command: ReportCommand
  /** `--step`: one step (plus, on install, its prerequisites). */
  readonly selected: StepId | null
  readonly noHistory: boolean
  readonly purge: boolean
  readonly hooks: HooksChoice
  /** The agents the checklist is for (`blctx install <target>`); codex when not said. */
  readonly targets?: ReadonlyArray<AgentTarget>
  /**
   * Whether the command line named the target (`blctx status claude`), rather than status or
   * doctor taking every installed one (`blctx status`): the checklist's heading says which.
   */
  readonly targetNamed?: boolean
}

/** A request the engine refuses before running anything (exit code 2). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

const isHistoryStep = (id: StepId) => HISTORY_STEP_IDS.includes(id)

export const validateRequest = (request: RunRequest): Effect.Effect<void, UsageError> => {
  if (request.selected !== null && request.noHistory && isHistoryStep(request.selected)) {
    return Effect.fail(
      new UsageError({ message: `--step ${request.selected} cannot be combined with --no-history, which skips it` })
    )
  }
  if (request.selected !== null && request.command === "uninstall") {
    return Effect.fail(new UsageError({ message: "uninstall always covers every step; --step is not accepted" }))
  }
  return Effect.void
}

/** The steps a run covers, in display order. */
export const selectSteps = <R>(steps: ReadonlyArray<Step<R>>, request: RunRequest): ReadonlyArray<Step<R>> => {
  if (request.selected === null) return steps
  const byId = new Map(steps.map((s) => [s.id, s]))
  const wanted = new Set<StepId>()
  const visit = (id: StepId) => {
    if (wanted.has(id)) return
    wanted.add(id)
    // Only install runs prerequisites; status and doctor verify exactly what was asked.
    if (request.command === "install") for (const dep of byId.get(id)?.requires ?? []) visit(dep)
  }
  visit(request.selected)
  return steps.filter((s) => wanted.has(s.id))
}

const unexpected = (cause: Cause.Cause<unknown>) => ({
  detail: `unexpected error: ${Cause.pretty(cause).split("\n")[0] ?? "unknown"}`,
  remediation: "This is a bug in blctx. Re-run with --json and report the output."
})

/** Said by doctor for a step that has nothing to check beyond what status checks. */
export const NO_DEEPER_CHECK = "(no deeper check for this step)"

const isBlank = (text: string) => text.trim() === ""

/**
 * Every failed check says what happened: a failure with a blank detail gets one naming the step,
 * the phase and the error behind it, and a blank remediation gets one a person can act on.
 */
export const explainFailure =
  (id: StepId, phase: string) =>
  (failure: StepFailure): StepFailure => {
    if (!isBlank(failure.detail) && !isBlank(failure.remediation)) return failure
    const tag = failure.errorTag ?? failure._tag
    return new StepFailure({
      detail: isBlank(failure.detail) ? `${id} ${phase} failed with ${tag} and no detail` : failure.detail,
      remediation: isBlank(failure.remediation)
        ? "This is a bug in blctx (a failure without a remediation). Re-run with --json and report the output."
        : failure.remediation,
      ...(failure.errorTag === undefined ? {} : { errorTag: failure.errorTag })
    })
  }

const withDetail = (failure: StepFailure, detail: string) =>
  new StepFailure({
    detail,
    remediation: failure.remediation,
    ...(failure.errorTag === undefined ? {} : { errorTag: failure.errorTag })
  })

const phase = <R>(id: StepId, name: string, effect: Effect.Effect<StepOutcome, StepFailure, R>) =>
  Effect.mapError(effect, explainFailure(id, name))

/**
 * Doctor: verify, then the step's deeper checks (even when verify failed: they may say why).
 * The check passes only when both do; a step without deeper checks says so, so doctor's report
 * never silently repeats status.
 */
const doctorOne = <R>(step: Step<R>, run: StepRun): Effect.Effect<StepOutcome, StepFailure, R> =>
  Effect.gen(function* () {
    const diagnose = step.diagnose
    if (diagnose === undefined) {
      return yield* phase(step.id, "verify", step.verify(run)).pipe(
        Effect.mapBoth({
          onSuccess: (o) => ({ detail: `${o.detail} ${NO_DEEPER_CHECK}` }),
          onFailure: (f) => withDetail(f, `${f.detail} ${NO_DEEPER_CHECK}`)
        })
      )
    }
    const verified = yield* Effect.either(phase(step.id, "verify", step.verify(run)))
    const deeper = yield* Effect.either(phase(step.id, "diagnose", diagnose(run)))
    if (Either.isRight(verified)) {
      if (Either.isRight(deeper)) return { detail: `${verified.right.detail}; deeper check: ${deeper.right.detail}` }
      return yield* withDetail(
        deeper.left,
        `deeper check failed: ${deeper.left.detail} (status alone passes: ${verified.right.detail})`
      )
    }
    const found = Either.match(deeper, { onLeft: (f) => f.detail, onRight: (o) => o.detail })
    return yield* withDetail(verified.left, `${verified.left.detail}; deeper check: ${found}`)
  })

const runOne = <R>(step: Step<R>, run: StepRun): Effect.Effect<StepOutcome, StepFailure, R> => {
  switch (run.command) {
    case "install":
      // Report what install did, once verify has confirmed it.
      return Effect.tap(phase(step.id, "install", step.install(run)), () => phase(step.id, "verify", step.verify(run)))
    case "status":
      return phase(step.id, "verify", step.verify(run))
    case "doctor":
      return doctorOne(step, run)
    case "uninstall":
      return phase(step.id, "uninstall", step.uninstall(run))
  }
}

/** One step's check: skipped, blocked by a prerequisite's result, or run (and its events rendered). */
const runChecked = <R>(
  step: Step<R>,
  request: RunRequest,
  prerequisites: ReadonlyMap<StepId, Check>,
  renderer: Context.Tag.Service<typeof Renderer>
): Effect.Effect<Check, never, R> =>
  Effect.gen(function* () {
    const base = { id: step.id, title: step.title, dependencies: [...step.requires] }
    if (request.noHistory && isHistoryStep(step.id)) {
      return new Check({
        ...base,
        status: "skipped",
        detail: "skipped by --no-history",
        skip_reason: "no_history"
      })
    }
    const failedPrerequisite =
      request.command === "uninstall"
        ? Option.none()
        : Option.fromNullable(
            step.requires.find((dep) => {
              const status = prerequisites.get(dep)?.status
              return status === "failed" || status === "blocked"
            })
          )
    if (Option.isSome(failedPrerequisite)) {
      return new Check({
        ...base,
        status: "blocked",
        detail: `blocked: prerequisite ${failedPrerequisite.value} did not pass`,
        remediation: `Fix ${failedPrerequisite.value} first (blctx doctor --step ${failedPrerequisite.value}).`
      })
    }
    yield* renderer.started(step.id)
    const run: StepRun = {
      command: request.command,
      purge: request.purge,
      hooks: request.hooks,
      progress: (p) => renderer.progress(step.id, p),
      failedBefore:
        request.command === "uninstall"
          ? [...prerequisites].filter(([, check]) => check.status === "failed").map(([id]) => id)
          : []
    }
    return yield* runOne(step, run).pipe(
      Effect.match({
        onSuccess: (outcome) => new Check({ ...base, status: "passed", detail: outcome.detail }),
        onFailure: (failure) =>
          new Check({ ...base, status: "failed", detail: failure.detail, remediation: failure.remediation })
      }),
      Effect.catchAllDefect((defect) =>
        Effect.succeed(new Check({ ...base, status: "failed", ...unexpected(Cause.die(defect)) }))
      ),
      Effect.withSpan("installer.step", { attributes: { step: step.id, command: request.command } })
    )
  })

/**
 * Runs the checklist: prerequisites before dependents, a failed prerequisite blocks its
 * dependents without running them, and `status`/`doctor` never call `install`. Status and doctor
 * run independent checks at once; install and uninstall one step at a time. The report lists the
 * checks in display order whatever order they finished in.
 */
export const runSteps = <R>(
  steps: ReadonlyArray<Step<R>>,
  request: RunRequest
): Effect.Effect<Report, never, R | Renderer> =>
  Effect.gen(function* () {
    const renderer = yield* Renderer
    const selected = [...selectSteps(steps, request)].sort((a, b) => displayIndex(a.id) - displayIndex(b.id))
    yield* renderer.begin(
      request.command,
      selected.map((s) => ({ id: s.id, title: s.title })),
      checklistHeading(request.command, request.targets ?? DEFAULT_TARGETS, request.targetNamed ?? true)
    )
    const checkOf = (step: Step<R>, prerequisites: ReadonlyMap<StepId, Check>) =>
      Effect.gen(function* () {
        const check = yield* runChecked(step, request, prerequisites, renderer)
        yield* renderer.finished(check)
        return check
      })

    const results = new Map<StepId, Check>()
    if (request.command === "status" || request.command === "doctor") {
      // Checks change nothing, so independent ones run at once (each agent CLI, the daemon and the
      // MCP server take their own seconds); a check still waits for its prerequisites' results.
      const done = new Map<StepId, Deferred.Deferred<Check>>()
      for (const step of selected) done.set(step.id, yield* Deferred.make<Check>())
      yield* Effect.forEach(
        selected,
        (step) =>
          Effect.gen(function* () {
            const prerequisites = new Map<StepId, Check>()
            for (const dep of step.requires) {
              const pending = done.get(dep)
              if (pending !== undefined) prerequisites.set(dep, yield* Deferred.await(pending))
            }
            const check = yield* checkOf(step, prerequisites)
            results.set(step.id, check)
            yield* Deferred.succeed(done.get(step.id) as Deferred.Deferred<Check>, check)
          }),
        { concurrency: "unbounded", discard: true }
      )
    } else {
      // Install and uninstall change things one at a time, in order; uninstall tears down in
      // reverse: the service stops before the data step gives up ownership.
      const order = request.command === "uninstall" ? [...selected].reverse() : selected
      for (const step of order) results.set(step.id, yield* checkOf(step, results))
    }

    const checks = selected.flatMap((s) => {
      const c = results.get(s.id)
      return c === undefined ? [] : [c]
    })
    const allGood = checks.every((c) => c.status === "passed" || c.status === "skipped")
    const targets = request.targets ?? DEFAULT_TARGETS
    const report = new Report({
      command: request.command,
      target: targets.length === 1 ? (targets[0] ?? AGENT_TARGETS[0]) : "all",
      targets: [...targets],
      ready: request.selected === null && request.command !== "uninstall" && allGood,
      exit_code: allGood ? ExitCode.ok : ExitCode.failed,
      selected_step: request.selected,
      checks
    })
    yield* renderer.end(report)
    return report
  })
