import { Context, type Effect, type Stream } from "effect"
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
    /** `heading`: the command as run, `blctx install claude` (`checklistHeading`). */
    readonly begin: (command: ReportCommand, rows: ReadonlyArray<PlannedRow>, heading: string) => Effect.Effect<void>
    readonly started: (id: StepId) => Effect.Effect<void>
    readonly progress: (id: StepId, progress: StepProgress) => Effect.Effect<void>
    readonly finished: (check: Check) => Effect.Effect<void>
    readonly end: (report: Report) => Effect.Effect<void>
  }
>() {}

/** A terminal's size in character cells. */
export interface TerminalSize {
  readonly columns: number
  readonly rows: number
}

/**
 * The terminal the live checklist draws on: its output, its current size and its resizes. The
 * live implementation is the process's stdout; tests give the renderer an emulated terminal.
 */
export class TerminalSink extends Context.Tag("blctx/TerminalSink")<
  TerminalSink,
  {
    readonly write: (text: string) => Effect.Effect<void>
    /** Read before every redraw: the width may change at any time. */
    readonly size: Effect.Effect<TerminalSize>
    /** One element each time the terminal is resized. */
    readonly resized: Stream.Stream<void>
  }
>() {}
