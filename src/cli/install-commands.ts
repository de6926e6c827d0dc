import { Args, Command, type HelpDoc, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { ReportCommand } from "../domain/report.js"
import { AGENT_TARGETS, type AgentTarget, agentStepId, STEP_IDS, type StepId, targetOfStep } from "../domain/step-id.js"
import { type RunRequest, runSteps, validateRequest } from "../installer/engine.js"
import type { HooksChoice } from "../installer/step.js"
import { readAnsweredHooks } from "../installer/steps/hooks-manifest.js"
import { checklistFor, readInstalledTargets } from "../installer/steps/registry.js"
import type { HooksDecision } from "../ownership/manifest.js"
import { agentChoices, agentLabel } from "../transcripts/formats/registry.js"
import { choiceOption } from "./checked-options.js"
import { ExitStatus } from "./exit-status.js"
import { commandDescription } from "./help.js"
import { OutputMode } from "./output-mode.js"
import { Prompter } from "./prompter.js"
import { CliUsageError } from "./usage-error.js"

const agent = Args.choice(
  AGENT_TARGETS.map((t) => [t, t] as const),
  { name: "target" }
)
const target = (description: string) => agent.pipe(Args.withDescription(description))

const HISTORY_STEPS = "session_discovery, history_index and history_retrieval"
const step = (description: string) => choiceOption("step", STEP_IDS, description).pipe(Options.optional)
const noHistory = (description: string) => Options.boolean("no-history").pipe(Options.withDescription(description))
const hooks = Options.boolean("hooks").pipe(
  Options.withDescription(
    "Install the optional agent hooks without asking. Without --hooks or --no-hooks, install asks when run at a terminal and installs them otherwise."
  )
)
const noHooks = Options.boolean("no-hooks").pipe(
  Options.withDescription(
    `Do not install the optional agent hooks; the choice is remembered and the hooks step (${AGENT_TARGETS.map((t) => agentStepId(t, "hooks")).join(", ")}) then passes.`
  )
)
const purge = Options.boolean("purge").pipe(
  Options.withDescription(
    "Also delete the files blctx owns: the database with your indexed history, the ownership manifest and the downloaded model. Files blctx did not create, and directories that still hold other files, stay."
  )
)

/**
 * The hooks choice of an install: the flag; else, at a terminal, the person's answer, asked once
 * (`answered` is what an earlier install recorded, which stands until a flag changes it); else the
 * recorded choice or the default.
 */
export const decideHooks = (
  flags: { hooks: boolean; noHooks: boolean },
  target: AgentTarget,
  answered: Option.Option<HooksDecision>
) =>
  Effect.gen(function* () {
    if (flags.hooks && flags.noHooks) {
      return yield* new CliUsageError({ message: "--hooks and --no-hooks cannot be used together" })
    }
    if (flags.hooks) return "install" as HooksChoice
    if (flags.noHooks) return "decline" as HooksChoice
    const mode = yield* OutputMode
    // Nobody to ask, or already answered: keep whatever choice was recorded before.
    if (!mode.interactive || Option.isSome(answered)) return "default" as HooksChoice
    const prompter = yield* Prompter
    const yes = yield* prompter.confirm(
      `Install the optional ${agentLabel(target)} hooks (capture new sessions and notes)?`,
      true
    )
    return (yes ? "install" : "decline") as HooksChoice
  })

/**
 * The targets a command covers: the one named; else, for status and doctor, the target owning the
 * selected step, or every target the manifest records as installed (codex when none is).
 */
const targetsOf = (named: Option.Option<AgentTarget>, step: StepId | null) =>
  Effect.gen(function* () {
    if (Option.isSome(named)) return [named.value]
    const owner = step === null ? undefined : targetOfStep(step)
    if (owner !== undefined) return [owner]
    const installed = yield* readInstalledTargets
    return installed.length > 0 ? installed : [AGENT_TARGETS[0]]
  })

const runChecklist = (
  command: ReportCommand,
  targets: ReadonlyArray<AgentTarget>,
  request: Omit<RunRequest, "command" | "targets">
) =>
  Effect.gen(function* () {
    const full: RunRequest = { command, targets, ...request }
    yield* validateRequest(full).pipe(Effect.mapError((e) => new CliUsageError({ message: e.message })))
    const steps = yield* checklistFor(command, targets)
    const selected = full.selected
    if (selected !== null && !steps.some((s) => s.id === selected)) {
      const owner = targetOfStep(selected)
      return yield* new CliUsageError({
        message: `--step ${selected} is not a step of ${targets.join(" and ")}${owner === undefined || targets.includes(owner) ? "" : ` (it is ${owner}'s: blctx ${command} ${owner} --step ${selected})`}; the steps are: ${steps.map((s) => s.id).join(", ")}`
      })
    }
    const report = yield* runSteps(steps, full)
    yield* Effect.flatMap(ExitStatus, (s) => s.set(report.exit_code))
  })

const selected = (o: Option.Option<StepId>) => Option.getOrNull(o)

export const installCommand = Command.make(
  "install",
  {
    target: target(`The agent to set blctx up for: ${agentChoices({ glossed: true })}.`),
    step: step("Run only this step, after the steps it needs (its prerequisites)."),
    noHistory: noHistory(`Skip the history steps (${HISTORY_STEPS}): nothing is indexed.`),
    hooks,
    noHooks
  },
  (o) =>
    Effect.gen(function* () {
      // Validate the cheap things before asking anything.
      const base = { selected: selected(o.step), noHistory: o.noHistory, purge: false, hooks: "install" as HooksChoice }
      yield* validateRequest({ command: "install", ...base }).pipe(
        Effect.mapError((e) => new CliUsageError({ message: e.message }))
      )
      const wantsHooks = o.step._tag === "None" || o.step.value === `${o.target}_hooks`
      const choice = wantsHooks ? yield* decideHooks(o, o.target, yield* readAnsweredHooks(o.target)) : base.hooks
      yield* runChecklist("install", [o.target], { ...base, hooks: choice })
    })
).pipe(
  Command.withDescription(
    commandDescription(
      "Set up blctx for an agent and verify it, step by step",
      "Runs an ordered checklist (private data directory, daemon, MCP server, skill, embedding model, history index, optional hooks) and verifies every step after it runs. A step whose prerequisite did not pass is blocked. Exit 0 when every selected step passed, 1 otherwise."
    )
  )
)

const verifyCommand = (
  name: "status" | "doctor",
  description: HelpDoc.HelpDoc,
  words: { readonly target: string; readonly step: string; readonly noHistory: string }
) =>
  Command.make(
    name,
    { target: target(words.target).pipe(Args.optional), step: step(words.step), noHistory: noHistory(words.noHistory) },
    (o) =>
      Effect.flatMap(targetsOf(o.target, selected(o.step)), (targets) =>
        runChecklist(name, targets, {
          selected: selected(o.step),
          noHistory: o.noHistory,
          purge: false,
          hooks: "install",
          targetNamed: Option.isSome(o.target)
        })
      )
  ).pipe(Command.withDescription(description))

export const statusCommand = verifyCommand(
  "status",
  commandDescription(
    "Check what install set up, without changing anything",
    "Verifies every step as install left it and prints the checklist. It only looks: it never installs, starts, repairs, downloads or removes anything. Exit 0 when every selected check passed, 1 otherwise."
  ),
  {
    target: `The agent whose setup to check: ${agentChoices()}. Without it, every installed one.`,
    step: "Check only this step; the steps it needs are not checked with it.",
    noHistory: `Leave out the history checks (${HISTORY_STEPS}).`
  }
)

export const doctorCommand = verifyCommand(
  "doctor",
  commandDescription(
    "Diagnose what is wrong, with a fix for every failure",
    "Runs the checks of status and deeper diagnoses where a step has them, and gives a remediation (what to run or change) for every step that fails. Like status, it never changes anything. Exit 0 when every selected check passed, 1 otherwise."
  ),
  {
    target: `The agent whose setup to diagnose: ${agentChoices()}. Without it, every installed one.`,
    step: "Diagnose only this step; the steps it needs are not diagnosed with it.",
    noHistory: `Leave out the history diagnoses (${HISTORY_STEPS}).`
  }
)

export const uninstallCommand = Command.make(
  "uninstall",
  {
    target: target(
      `The agent to remove blctx from: ${agentChoices()}. What the others still use (data, daemon, model) stays.`
    ),
    purge
  },
  (o) => runChecklist("uninstall", [o.target], { selected: null, noHistory: false, purge: o.purge, hooks: "install" })
).pipe(
  Command.withDescription(
    commandDescription(
      "Stop blctx for an agent and remove what install set up",
      "Removes what install set up for the agent (its MCP registration, skill and hooks). When no other agent is installed, it also stops the daemon and removes its service and socket. Your indexed history, the configuration and the downloaded model are kept unless --purge."
    )
  )
)
