import { Data, type Effect } from "effect"
import type { ReportCommand } from "../domain/report.js"
import type { StepId } from "../domain/step-id.js"

/** What a step says when it succeeds: one line a person can read. */
export interface StepOutcome {
  readonly detail: string
}

/**
 * A step that could not do or confirm its job. Always says what a person can do about it.
 * `errorTag` names the error behind it (its `_tag`), so a failure whose message was empty can
 * still say what happened.
 */
export class StepFailure extends Data.TaggedError("StepFailure")<{
  readonly detail: string
  readonly remediation: string
  readonly errorTag?: string
}> {
  override get message() {
    return this.detail
  }
}

/** Progress inside a step's row: a fraction in [0, 1] when known, and a short label. */
export interface StepProgress {
  readonly label: string
  readonly fraction?: number
}

/**
 * Whether the optional Codex hooks are wanted in this run: asked for (`--hooks` or yes at the
 * prompt), declined (`--no-hooks` or no), or `default` when nobody was asked (no flag, no TTY):
 * then the choice recorded by an earlier install stands, and without one the default applies.
 */
export type HooksChoice = "install" | "decline" | "default"

/** What the engine hands to a step for one run. */
export interface StepRun {
  readonly command: ReportCommand
  readonly purge: boolean
  readonly hooks: HooksChoice
  readonly progress: (progress: StepProgress) => Effect.Effect<void>
  /**
   * Uninstall only: the steps of this run that already failed to remove what they own. Uninstall
   * runs in reverse, so the data step, last, sees every other, and keeps the manifest (the record
   * of what blctx owns) while anything it lists is still in place.
   */
  readonly failedBefore: ReadonlyArray<StepId>
}

/**
 * A step is data plus effects. `verify` never changes anything; `diagnose` (doctor only) adds
 * deeper checks on top of `verify` and never changes anything either; it runs even when `verify`
 * failed, so it must cope with a missing or broken installation and say what it found.
 * `install` is only ever called by `install`.
 */
export interface Step<R = never> {
  readonly id: StepId
  readonly title: string
  readonly requires: ReadonlyArray<StepId>
  readonly install: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly verify: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly diagnose?: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
  readonly uninstall: (run: StepRun) => Effect.Effect<StepOutcome, StepFailure, R>
}

export const fail = (detail: string, remediation: string, errorTag?: string) =>
  new StepFailure(errorTag === undefined ? { detail, remediation } : { detail, remediation, errorTag })

/** An error's tag and message, never an empty string: a failure must always say what happened. */
export const describeError = (e: unknown): string => {
  if (typeof e !== "object" || e === null) return String(e) === "" ? "an unnamed error" : String(e)
  const tag = "_tag" in e && typeof e._tag === "string" ? e._tag : e.constructor.name || "Error"
  // DaemonUnavailable's message repeats its remediation; its reason is what happened.
  const said = "reason" in e && typeof e.reason === "string" ? e.reason : "message" in e ? e.message : ""
  const message = typeof said === "string" ? said.trim() : ""
  return message === "" ? `${tag} (with no message)` : `${tag}: ${message}`
}
