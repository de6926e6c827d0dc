import { Schema } from "effect"
import { AgentTarget, StepId } from "./step-id.js"

export const CheckStatus = Schema.Literal("passed", "failed", "blocked", "skipped")
export type CheckStatus = typeof CheckStatus.Type

export const SkipReason = Schema.Literal("no_history")
export type SkipReason = typeof SkipReason.Type

/** One row of the checklist: the same value feeds the TTY renderer and `--json`. */
export class Check extends Schema.Class<Check>("Check")({
  id: StepId,
  title: Schema.String,
  status: CheckStatus,
  detail: Schema.String,
  remediation: Schema.optional(Schema.String),
  skip_reason: Schema.optional(SkipReason),
  dependencies: Schema.Array(StepId)
}) {}

export const ReportCommand = Schema.Literal("install", "status", "doctor", "uninstall")
export type ReportCommand = typeof ReportCommand.Type

export class Report extends Schema.Class<Report>("Report")({
  command: ReportCommand,
  /**
   * The agent the run is for; `all` when status or doctor, run without a target, checked every
   * installed target at once (then `targets` names them).
   */
  target: Schema.Literal(...AgentTarget.literals, "all"),
  /** The targets the checklist covers (absent in reports of older builds, which only knew codex). */
  targets: Schema.optional(Schema.Array(AgentTarget)),
  ready: Schema.Boolean,
  exit_code: Schema.Number,
  selected_step: Schema.NullOr(StepId),
  checks: Schema.Array(Check)
}) {}

/** Exit codes shared by every command. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2
} as const
