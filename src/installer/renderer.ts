import { Context, type Effect } from "effect"
import type { Check, Report, ReportCommand } from "../domain/report.js"
import type { StepId } from "../domain/step-id.js"
import type { StepProgress } from "./step.js"

export interface PlannedRow {
  readonly id: StepId
  readonly title: string
}

/**
 * Shows a run as it happens. The engine only emits events; the TTY, plain and JSON
 * renderers decide what a person (or a script) sees. All of them end with the same Report.
 */
export class Renderer extends Context.Tag("blctx/Renderer")<
  Renderer,
  {
    readonly begin: (command: ReportCommand, rows: ReadonlyArray<PlannedRow>) => Effect.Effect<void>
    readonly started: (id: StepId) => Effect.Effect<void>
    readonly progress: (id: StepId, progress: StepProgress) => Effect.Effect<void>
    readonly finished: (check: Check) => Effect.Effect<void>
    readonly end: (report: Report) => Effect.Effect<void>
  }
>() {}
