import { Effect, Layer, Ref, Schedule, Schema } from "effect"
import { type Check, Report } from "../src/domain/report.js"
import type { StepId } from "../src/domain/step-id.js"
import {
  ansiStyle,
  checkLines,
  plainStyle,
  progressBar,
  sanitizeForTerminal,
  summaryLine
} from "../src/installer/render-text.js"
import { type PlannedRow, Renderer } from "../src/installer/renderer.js"
import type { StepProgress } from "../src/installer/step.js"

const write = (text: string) => Effect.sync(() => process.stdout.write(text))
const encodeReport = Schema.encodeSync(Report)

/** `--json`: nothing until the end, then exactly one JSON document. */
export const JsonRendererLive = Layer.succeed(Renderer, {
  begin: () => Effect.void,
  started: () => Effect.void,
  progress: () => Effect.void,
  finished: () => Effect.void,
  end: (report) => write(`${JSON.stringify(encodeReport(report), null, 2)}\n`)
})

/** `--no-color` or no TTY: one plain line per finished step, no animation, no escape codes. */
export const PlainRendererLive = Layer.succeed(Renderer, {
  begin: (command) => write(`blctx ${command} codex\n`),
  started: () => Effect.void,
  progress: () => Effect.void,
  finished: (check) => write(`${checkLines(check, plainStyle, true).join("\n")}\n`),
  end: (report) => write(`${summaryLine(report, plainStyle)}\n`)
})

type RowState =
  | { readonly _tag: "pending"; readonly row: PlannedRow }
  | { readonly _tag: "running"; readonly row: PlannedRow; readonly progress?: StepProgress }
  | { readonly _tag: "done"; readonly row: PlannedRow; readonly check: Check }

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** A TTY: one live row per step with a spinner and progress bar, redrawn in place. */
export const TtyRendererLive = Layer.scoped(
  Renderer,
  Effect.gen(function* () {
    const rows = yield* Ref.make<ReadonlyArray<RowState>>([])
    const frame = yield* Ref.make(0)
    const drawnLines = yield* Ref.make(0)

    const renderRow = (state: RowState, tick: number): ReadonlyArray<string> => {
      switch (state._tag) {
        case "pending":
          return [`${ansiStyle.dim("○")} ${ansiStyle.dim(state.row.title)}`]
        case "running": {
          const spin = ansiStyle.yellow(SPINNER[tick % SPINNER.length] ?? "*")
          const extra = state.progress === undefined ? "" : ` ${sanitizeForTerminal(progressBar(state.progress))}`
          return [`${spin} ${state.row.title}${extra}`]
        }
        case "done":
          return checkLines(state.check, ansiStyle, false)
      }
    }

    const redraw = Effect.gen(function* () {
      const states = yield* Ref.get(rows)
      const tick = yield* Ref.getAndUpdate(frame, (n) => n + 1)
      const lines = states.flatMap((s) => renderRow(s, tick))
      const previous = yield* Ref.getAndSet(drawnLines, lines.length)
      const up = previous > 0 ? `\u001b[${previous}F` : ""
      yield* write(`${up}${lines.map((l) => `\u001b[2K${l}`).join("\n")}\n`)
    })

    const update = (id: StepId, f: (s: RowState) => RowState) =>
      Ref.update(rows, (all) => all.map((s) => (s.row.id === id ? f(s) : s))).pipe(Effect.zipRight(redraw))

    // The spinner ticks on its own so a long step still looks alive.
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.flatMap(Ref.get(rows), (all) => (all.some((s) => s._tag === "running") ? redraw : Effect.void)),
        Schedule.spaced("100 millis")
      )
    )

    return {
      begin: (command, planned) =>
        write(`${ansiStyle.bold(`blctx ${command} codex`)}\n`).pipe(
          Effect.zipRight(
            Ref.set(
              rows,
              planned.map((row) => ({ _tag: "pending", row }) as const)
            )
          ),
          Effect.zipRight(redraw)
        ),
      started: (id) => update(id, (s) => ({ _tag: "running", row: s.row })),
      progress: (id, progress) => update(id, (s) => ({ _tag: "running", row: s.row, progress })),
      finished: (check) => update(check.id, (s) => ({ _tag: "done", row: s.row, check })),
      end: (report) => Effect.zipRight(redraw, write(`${summaryLine(report, ansiStyle)}\n`))
    }
  })
)
