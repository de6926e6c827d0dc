import { Effect, Layer, Ref, Schedule, Schema, Stream } from "effect"
import { type Check, Report } from "../src/domain/report.js"
import type { StepId } from "../src/domain/step-id.js"
import {
  ansiStyle,
  checkLines,
  displayWidth,
  fitLine,
  plainStyle,
  progressBar,
  sanitizeForTerminal,
  summaryLine
} from "../src/installer/render-text.js"
import { type PlannedRow, Renderer, TerminalSink, type TerminalSize } from "../src/installer/renderer.js"
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

/** What the plain renderer has still to print: the planned rows not printed yet, in display order. */
interface PlainQueue {
  readonly waiting: ReadonlyArray<StepId>
  readonly finished: ReadonlyMap<StepId, Check>
}

/** Takes the finished rows at the head of the queue, in display order. */
const takeReady = (queue: PlainQueue): readonly [ReadonlyArray<Check>, PlainQueue] => {
  const ready: Array<Check> = []
  let at = 0
  for (; at < queue.waiting.length; at++) {
    const check = queue.finished.get(queue.waiting[at] as StepId)
    if (check === undefined) break
    ready.push(check)
  }
  return [ready, { waiting: queue.waiting.slice(at), finished: queue.finished }]
}

/**
 * `--no-color` or no TTY: one plain line per step, no animation, no escape codes. Status and
 * doctor run checks at once, so a row is held until every row above it is printed: the lines
 * always come in display order.
 */
export const PlainRenderer = Layer.effect(
  Renderer,
  Effect.gen(function* () {
    const sink = yield* TerminalSink
    const write = sink.write
    const queue = yield* Ref.make<PlainQueue>({ waiting: [], finished: new Map() })
    const lines = (check: Check) => `${checkLines(check, plainStyle, true).join("\n")}\n`
    return {
      begin: (_command, rows, heading) =>
        Effect.zipRight(
          Ref.set(queue, { waiting: rows.map((r) => r.id), finished: new Map() }),
          write(`${sanitizeForTerminal(heading)}\n`)
        ),
      started: () => Effect.void,
      progress: () => Effect.void,
      finished: (check) =>
        Effect.flatMap(
          Ref.modify(queue, (q) => {
            const known = q.waiting.includes(check.id)
            return known
              ? takeReady({ waiting: q.waiting, finished: new Map(q.finished).set(check.id, check) })
              : [[check], q]
          }),
          (ready) => (ready.length === 0 ? Effect.void : write(ready.map(lines).join("")))
        ),
      end: (report) => write(`${summaryLine(report, plainStyle)}\n`)
    }
  })
)

type RowState =
  | { readonly _tag: "pending"; readonly row: PlannedRow }
  | { readonly _tag: "running"; readonly row: PlannedRow; readonly progress?: StepProgress }
  | { readonly _tag: "done"; readonly row: PlannedRow; readonly check: Check }

/** What the TTY renderer has put on the screen so far. */
interface Screen {
  readonly rows: ReadonlyArray<RowState>
  /** How many leading rows are printed for good, above the live region. */
  readonly printed: number
  /** The width of each line of the live region as last drawn; the cursor sits on the line below. */
  readonly live: ReadonlyArray<number>
  readonly frame: number
  readonly ended: boolean
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

const liveRow = (state: RowState, frame: number): string => {
  switch (state._tag) {
    case "pending":
      return `${ansiStyle.dim("○")} ${ansiStyle.dim(state.row.title)}`
    case "running": {
      const spin = ansiStyle.yellow(SPINNER[frame % SPINNER.length] ?? "*")
      const extra = state.progress === undefined ? "" : ` ${sanitizeForTerminal(progressBar(state.progress))}`
      return `${spin} ${state.row.title}${extra}`
    }
    case "done":
      // Finished, but waiting for an earlier row: its full text is printed once that one is done.
      return checkLines(state.check, ansiStyle, false)[0] ?? ""
  }
}

/**
 * The live region: one terminal line per row, cut to a column short of the width (so a line
 * never wraps, even with a character wider than counted), and no taller than the screen, so the
 * next redraw can always climb back to its first line.
 */
const liveLines = (rows: ReadonlyArray<RowState>, frame: number, size: TerminalSize): ReadonlyArray<string> => {
  const lines = rows.map((row) => liveRow(row, frame))
  const room = Math.max(1, size.rows - 1)
  const shown =
    lines.length <= room
      ? lines
      : [...lines.slice(0, room - 1), ansiStyle.dim(`… ${lines.length - room + 1} more steps`)]
  return shown.map((line) => fitLine(line, Math.max(1, size.columns - 1)))
}

/**
 * How many terminal lines a line of text this wide occupies at `columns`. Terminals reflow on
 * resize, so a line drawn narrower than an old width may now wrap onto several.
 */
const physicalLines = (width: number, columns: number) => Math.max(1, Math.ceil(width / columns))

const ERASE_LINE = "\u001b[2K"
const ERASE_BELOW = "\u001b[J"
const up = (lines: number) => (lines > 0 ? `\u001b[${lines}F` : "")

/**
 * A TTY: rows in display order, each step's full result printed once and never redrawn; below
 * them a live region (pending and running rows with a spinner and progress bar, one line each)
 * redrawn in place. A row that finishes before an earlier one (uninstall runs in reverse) waits
 * in the live region until every row above it is printed.
 */
export const TtyRenderer = Layer.scoped(
  Renderer,
  Effect.gen(function* () {
    const sink = yield* TerminalSink
    const lock = yield* Effect.makeSemaphore(1)
    const screen = yield* Ref.make<Screen>({ rows: [], printed: 0, live: [], frame: 0, ended: false })

    // Climbs to the top of the live region, prints the rows that are now final, and redraws the rest.
    const draw = Effect.gen(function* () {
      const current = yield* Ref.get(screen)
      if (current.ended) return
      const size = yield* sink.size
      const columns = Math.max(1, size.columns)
      let out = up(current.live.reduce((n, width) => n + physicalLines(width, columns), 0))
      let printed = current.printed
      let final = ""
      for (const row of current.rows.slice(printed)) {
        if (row._tag !== "done") break
        final += `${checkLines(row.check, ansiStyle, false, columns).join("\n")}\n`
        printed += 1
      }
      // Printed rows may wrap onto lines the old live region left behind: clear them first.
      if (final !== "") out += `${ERASE_BELOW}${final}`
      const lines = liveLines(current.rows.slice(printed), current.frame, { columns, rows: size.rows })
      for (const line of lines) out += `${ERASE_LINE}${line}\n`
      out += ERASE_BELOW
      yield* Ref.update(screen, (s) => ({ ...s, printed, live: lines.map(displayWidth) }))
      yield* sink.write(out)
    })
    const redraw = lock.withPermits(1)(draw)

    const update = (id: StepId, f: (s: RowState) => RowState) =>
      Ref.update(screen, (s) => ({ ...s, rows: s.rows.map((row) => (row.row.id === id ? f(row) : row)) })).pipe(
        Effect.zipRight(redraw)
      )

    // The spinner ticks on its own so a long step still looks alive.
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.flatMap(Ref.get(screen), (s) =>
          !s.ended && s.rows.some((row) => row._tag === "running")
            ? Effect.zipRight(
                Ref.update(screen, (t) => ({ ...t, frame: t.frame + 1 })),
                redraw
              )
            : Effect.void
        ),
        Schedule.spaced("100 millis")
      )
    )
    // A resize reflows what is on screen; redraw at once so the live rows fit the new width.
    yield* Effect.forkScoped(Stream.runForEach(sink.resized, () => redraw))

    return {
      begin: (_command, planned, heading) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            yield* sink.write(`${ansiStyle.bold(sanitizeForTerminal(heading))}\n`)
            yield* Ref.set(screen, {
              rows: planned.map((row) => ({ _tag: "pending", row }) as const),
              printed: 0,
              live: [],
              frame: 0,
              ended: false
            })
            yield* draw
          })
        ),
      started: (id) => update(id, (s) => ({ _tag: "running", row: s.row })),
      progress: (id, progress) => update(id, (s) => ({ _tag: "running", row: s.row, progress })),
      finished: (check) => update(check.id, (s) => ({ _tag: "done", row: s.row, check })),
      end: (report) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            yield* draw
            yield* Ref.update(screen, (s) => ({ ...s, ended: true }))
            const { columns } = yield* sink.size
            yield* sink.write(`${summaryLine(report, ansiStyle, Math.max(1, columns))}\n`)
          })
        )
    }
  })
)

/** The process's stdout, sized by `columns` and `rows`, resized on its `resize` event. */
export const StdoutTerminalSinkLive = Layer.succeed(TerminalSink, {
  write: (text) => Effect.sync(() => process.stdout.write(text)),
  size: Effect.sync(() => ({ columns: process.stdout.columns || 80, rows: process.stdout.rows || 24 })),
  resized: Stream.async<void>((emit) => {
    const onResize = () => {
      void emit.single(undefined)
    }
    process.stdout.on("resize", onResize)
    return Effect.sync(() => {
      process.stdout.off("resize", onResize)
    })
  })
})

export const TtyRendererLive = TtyRenderer.pipe(Layer.provide(StdoutTerminalSinkLive))

export const PlainRendererLive = PlainRenderer.pipe(Layer.provide(StdoutTerminalSinkLive))
