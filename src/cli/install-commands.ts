import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { ReportCommand } from "../domain/report.js"
import { STEP_IDS, type StepId } from "../domain/step-id.js"
import { type RunRequest, runSteps, validateRequest } from "../installer/engine.js"
import type { HooksChoice } from "../installer/step.js"
import { installSteps } from "../installer/steps/registry.js"
import { ExitStatus } from "./exit-status.js"
import { OutputMode } from "./output-mode.js"
import { Prompter } from "./prompter.js"
import { CliUsageError } from "./usage-error.js"

const target = Args.choice([["codex", "codex"]] as const, { name: "target" }).pipe(
  Args.withDescription("What to set up: codex")
)
const optionalTarget = target.pipe(Args.optional)

const step = Options.choice("step", STEP_IDS).pipe(
  Options.withDescription("Run only this step (install also runs its prerequisites)"),
  Options.optional
)
const noHistory = Options.boolean("no-history").pipe(
  Options.withDescription("Skip session_discovery, history_index and history_retrieval")
)
const hooks = Options.boolean("hooks").pipe(Options.withDescription("Install the optional Codex hooks without asking"))
const noHooks = Options.boolean("no-hooks").pipe(Options.withDescription("Decline the optional Codex hooks"))
const purge = Options.boolean("purge").pipe(
  Options.withDescription("Also remove the files blctx owns (unknown files and pre-existing directories stay)")
)

const decideHooks = (flags: { hooks: boolean; noHooks: boolean }) =>
  Effect.gen(function* () {
    if (flags.hooks && flags.noHooks) {
      return yield* new CliUsageError({ message: "--hooks and --no-hooks cannot be used together" })
    }
    if (flags.hooks) return "install" as HooksChoice
    if (flags.noHooks) return "decline" as HooksChoice
    const mode = yield* OutputMode
    if (!mode.interactive) return "install" as HooksChoice
    const prompter = yield* Prompter
    const yes = yield* prompter.confirm("Install the optional Codex hooks (capture new sessions and notes)?", true)
    return (yes ? "install" : "decline") as HooksChoice
  })

const runChecklist = (command: ReportCommand, request: Omit<RunRequest, "command">) =>
  Effect.gen(function* () {
    const full: RunRequest = { command, ...request }
    yield* validateRequest(full).pipe(Effect.mapError((e) => new CliUsageError({ message: e.message })))
    const steps = yield* installSteps
    const report = yield* runSteps(steps, full)
    yield* Effect.flatMap(ExitStatus, (s) => s.set(report.exit_code))
  })

const selected = (o: Option.Option<StepId>) => Option.getOrNull(o)

export const installCommand = Command.make("install", { target, step, noHistory, hooks, noHooks }, (o) =>
  Effect.gen(function* () {
    // Validate the cheap things before asking anything.
    const base = { selected: selected(o.step), noHistory: o.noHistory, purge: false, hooks: "install" as HooksChoice }
    yield* validateRequest({ command: "install", ...base }).pipe(
      Effect.mapError((e) => new CliUsageError({ message: e.message }))
    )
    const wantsHooks = o.step._tag === "None" || o.step.value === "codex_hooks"
    const choice = wantsHooks ? yield* decideHooks(o) : base.hooks
    yield* runChecklist("install", { ...base, hooks: choice })
  })
).pipe(Command.withDescription("Set up and verify blctx for Codex, step by step"))

const verifyCommand = (name: "status" | "doctor", description: string) =>
  Command.make(name, { target: optionalTarget, step, noHistory }, (o) =>
    runChecklist(name, { selected: selected(o.step), noHistory: o.noHistory, purge: false, hooks: "install" })
  ).pipe(Command.withDescription(description))

export const statusCommand = verifyCommand("status", "Verify what is installed (never changes anything)")
export const doctorCommand = verifyCommand(
  "doctor",
  "Verify deeply and explain how to fix every failure (never changes anything)"
)

export const uninstallCommand = Command.make("uninstall", { target, purge }, (o) =>
  runChecklist("uninstall", { selected: null, noHistory: false, purge: o.purge, hooks: "install" })
).pipe(Command.withDescription("Stop blctx for Codex; keeps your data unless --purge"))
