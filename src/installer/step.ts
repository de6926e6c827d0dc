import { Data, type Effect } from "effect"
import type { ReportCommand } from "../domain/report.js"
import type { StepId } from "../domain/step-id.js"

/** What a step says when it succeeds: one line a person can read. */
export interface StepOutcome {
  readonly detail: string
}

/** A step that could not do or confirm its job. Always says what a person can do about it. */
export class StepFailure extends Data.TaggedError("StepFailure")<{
  readonly detail: string
  readonly remediation: string
}> {}

/** Progress inside a step's row: a fraction in [0, 1] when known, and a short label. */
export interface StepProgress {
  readonly label: string
  readonly fraction?: number
}

/** Whether the optional Codex hooks are wanted in this run. */
export type HooksChoice = "install" | "decline"

/** What the engine hands to a step for one run. */
export interface StepRun {
  readonly command: ReportCommand
  readonly purge: boolean
  readonly hooks: HooksChoice
  readonly progress: (progress: StepProgress) => Effect.Effect<void>
}

/**
 * A step is data plus effects. `verify` never changes anything; `diagnose` (doctor only) adds
 * deeper checks on top of `verify`; `install` is only ever called by `install`.
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

export const fail = (detail: string, remediation: string) => new StepFailure({ detail, remediation })
