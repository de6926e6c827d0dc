import { describe, expect, it } from "@effect/vitest"
import xterm from "@xterm/headless"
import { Deferred, Duration, Effect, Layer, Queue, Stream, TestClock } from "effect"
import type { Report, ReportCommand } from "../src/domain/report.js"
import type { StepId } from "../src/domain/step-id.js"
import { runSteps } from "../src/installer/engine.js"
import { checkLines, plainStyle, summaryLine } from "../src/installer/render-text.js"
import { TerminalSink } from "../src/installer/renderer.js"
import { fail, type Step, type StepProgress } from "../src/installer/step.js"
import { PlainRenderer, TtyRenderer } from "./terminal-renderer.js"

/**
 * An emulated terminal (xterm.js) behind the renderer's TerminalSink: what the renderer writes is
 * interpreted as a real terminal would (cursor movement, erasing, wrapping, reflow on resize), and
 * the test reads back the screen and its scrollback.
 */
const emulatedTerminal = (initial: { readonly columns: number; readonly rows: number }) =>
  Effect.gen(function* () {
    // The kernel's tty turns "\n" into "\r\n" (onlcr); convertEol does the same here.
    const term = new xterm.Terminal({
      cols: initial.columns,
      rows: initial.rows,
      allowProposedApi: true,
      convertEol: true,
      scrollback: 10_000
    })
    let size = { ...initial }
    let writes = 0
    const resizes = yield* Queue.unbounded<void>()
    const layer = Layer.succeed(TerminalSink, {
      write: (text) =>
        Effect.sync(() => {
          writes += 1
          term.write(text)
        }),
      size: Effect.sync(() => size),
      resized: Stream.fromQueue(resizes)
    })
    /** Resolves once the terminal has interpreted everything written so far. */
    const settled = Effect.async<void>((resume) => {
      term.write("", () => resume(Effect.void))
    })
    /** The screen and scrollback as logical lines: a line wrapped by the terminal is joined back. */
    const lines = Effect.map(settled, () => {
      const buffer = term.buffer.active
      const groups: Array<Array<string>> = []
      for (let i = 0; i < buffer.length; i++) {
        const line = buffer.getLine(i)
        if (line === undefined) continue
        const last = groups.at(-1)
        if (line.isWrapped && last !== undefined) last.push(line.translateToString(false))
        else groups.push([line.translateToString(false)])
      }
      const logical = groups.map((g) => ({ text: g.join("").trimEnd(), physical: g.length }))
      while (logical.length > 0 && logical.at(-1)?.text === "") logical.pop()
      return logical
    })
    /** Resizes the terminal (which reflows its content) and waits for the renderer to redraw. */
    const resize = (columns: number, rows: number) =>
      Effect.gen(function* () {
        yield* settled
        term.resize(columns, rows)
        size = { columns, rows }
        const before = writes
        yield* Queue.offer(resizes, undefined)
        yield* Effect.yieldNow().pipe(Effect.repeat({ until: () => writes > before }))
        yield* settled
      })
    yield* Effect.addFinalizer(() => Effect.sync(() => term.dispose()))
    return { layer, lines, resize, columns: () => size.columns }
  })

type EmulatedTerminal = Effect.Effect.Success<ReturnType<typeof emulatedTerminal>>

type Outcome =
  | { readonly _tag: "pass"; readonly detail: string }
  | { readonly _tag: "fail"; readonly detail: string; readonly fix: string }

/** What a step does while it runs: progress updates, spinner frames, and a hook to look at the screen. */
type Action =
  | { readonly _tag: "progress"; readonly progress: StepProgress }
  | { readonly _tag: "frames"; readonly n: number }
  | { readonly _tag: "inspect" }

const progress = (label: string, fraction?: number): Action => ({
  _tag: "progress",
  progress: fraction === undefined ? { label } : { label, fraction }
})
const frames = (n: number): Action => ({ _tag: "frames", n })
const inspect: Action = { _tag: "inspect" }
const pass = (detail: string): Outcome => ({ _tag: "pass", detail })
const failWith = (detail: string, fix: string): Outcome => ({ _tag: "fail", detail, fix })

interface Script {
  readonly id: StepId
  readonly title: string
  readonly requires: ReadonlyArray<StepId>
  readonly actions: ReadonlyArray<Action>
  readonly outcome: Outcome
}

const notYet = (id: StepId) =>
  failWith("not implemented yet", `The ${id} step is not available in this version of blctx; upgrade when it ships.`)

/** A realistic install: the real ids, titles and prerequisites; long failures with fixes; a URL. */
const installRun: ReadonlyArray<Script> = [
  {
    id: "data_directory",
    title: "Private data directory",
    requires: [],
    actions: [frames(2)],
    outcome: pass(
      "created /home/someone/.local/share/blctx, /home/someone/.local/state/blctx and /home/someone/.cache/blctx (mode 0700); installation 7f3c9d2e-41a8-4b6e-9c1d-0a5e8b7f6c21 recorded in manifest.json"
    )
  },
  {
    id: "background_service",
    title: "Background service (blctxd)",
    requires: ["data_directory"],
    actions: [progress("writing unit"), frames(2), progress("starting blctxd"), frames(3)],
    outcome: pass(
      "blctxd-7f3c9d2e-41a8-4b6e-9c1d-0a5e8b7f6c21.service active (pid 4242), listening on /run/user/1000/blctx/blctxd.sock"
    )
  },
  {
    id: "codex_mcp",
    title: "Codex MCP registration",
    requires: ["data_directory"],
    actions: [frames(1)],
    outcome: notYet("codex_mcp")
  },
  {
    id: "codex_skills",
    title: "Codex skills",
    requires: ["data_directory"],
    actions: [],
    outcome: notYet("codex_skills")
  },
  {
    id: "embedding_model",
    title: "Local embedding model",
    requires: ["data_directory"],
    actions: [
      progress("checking cache", 0),
      frames(2),
      progress("model_optimized.onnx 12.1/66.5 MiB from https://huggingface.co/Qdrant/bge-small-en-v1.5-onnx-Q", 0.18),
      frames(3),
      inspect,
      progress("model_optimized.onnx 40.0/66.5 MiB from https://huggingface.co/Qdrant/bge-small-en-v1.5-onnx-Q", 0.6),
      frames(4),
      progress("verifying", 0.75),
      frames(1)
    ],
    outcome: failWith(
      "download of https://huggingface.co/Qdrant/bge-small-en-v1.5-onnx-Q/resolve/6b3c2ea4f1d0e9b8a7c6d5e4f3a2b1c0d9e8f7a6/model_optimized.onnx failed after 3 attempts: connect ETIMEDOUT 18.244.202.60:443 while fetching 66.5 MiB; the partial file was removed from /home/someone/.cache/blctx/models/bge-small-en-v1.5 and nothing was loaded",
      "Check the network or the proxy (HTTPS_PROXY), or place the model files in /home/someone/.cache/blctx/models/bge-small-en-v1.5 by hand, then run: blctx install codex --step embedding_model"
    )
  },
  {
    id: "session_discovery",
    title: "Codex session discovery",
    requires: ["data_directory"],
    actions: [
      // Wide characters take two columns each: the live row must still fit on one line.
      progress(
        "scanning /home/someone/.codex/sessions/プロジェクト/設計メモ/第二版/レビュー待ち/作業ログ/二〇二五年六月/十四日",
        0.4
      ),
      frames(2),
      inspect
    ],
    outcome: pass("found 214 sessions over 38 days under /home/someone/.codex/sessions (newest 2 minutes ago)")
  },
  {
    id: "history_index",
    title: "History index",
    requires: ["background_service", "session_discovery"],
    actions: [
      progress(
        "importing /home/someone/.codex/sessions/2025/06/14/rollout-2025-06-14T09-12-44-5f1c2d3e-aa41-4b6e-9c1d-0a5e8b7f6c21.jsonl (12/214)",
        12 / 214
      ),
      frames(2),
      inspect,
      progress("importing 150/214 sessions", 150 / 214),
      frames(2),
      progress("importing 214/214 sessions", 1),
      frames(1)
    ],
    outcome: pass("import job 3 done: 214 sessions, 18,402 messages, 9,771 chunks indexed")
  },
  {
    id: "service_health",
    title: "Service health",
    requires: ["background_service"],
    actions: [progress("asking blctxd"), frames(3)],
    outcome: failWith(
      "blctxd answered on /run/user/1000/blctx/blctxd.sock but reported the vector index as unavailable: sqlite-vec could not be loaded into context.db (Error: /usr/lib/node_modules/blctx/node_modules/sqlite-vec-linux-x64/vec0.so: cannot open shared object file: No such file or directory)",
      "Reinstall blctx so its native modules match this machine (npm install -g blctx), then run: blctx doctor --step service_health"
    )
  },
  {
    id: "mcp_health",
    title: "MCP health",
    requires: ["codex_mcp", "service_health"],
    actions: [],
    outcome: pass("never runs: blocked")
  },
  {
    id: "history_retrieval",
    title: "History retrieval",
    requires: ["history_index", "service_health"],
    actions: [],
    outcome: pass("never runs: blocked")
  },
  {
    id: "codex_hooks",
    title: "Codex lifecycle hooks (optional)",
    requires: ["data_directory"],
    actions: [progress("registering SessionStart, Stop and SessionEnd"), frames(2)],
    outcome: pass("hooks SessionStart, Stop and SessionEnd registered in /home/someone/.codex/config.toml")
  }
]

type Screen = ReadonlyArray<{ readonly text: string; readonly physical: number }>

/** Which step a screen line is the row of, if any: its symbol, a space, then the title. */
const rowTitle = (line: string, titles: ReadonlyArray<string>) =>
  titles.find((t) => line.slice(2) === t || line.slice(2).startsWith(`${t} `))

/**
 * Runs the scripts through the real engine and the real TTY renderer on an emulated terminal.
 * `during` is called at every `inspect` action with the screen as it is then.
 */
const run = (
  command: ReportCommand,
  scripts: ReadonlyArray<Script>,
  size: { readonly columns: number; readonly rows: number },
  during: (screen: Screen, terminal: EmulatedTerminal) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function* () {
    const terminal = yield* emulatedTerminal(size)
    const problems: Array<unknown> = []
    // The engine hands each run its own progress callback; the scripts report through it.
    const act = (script: Script, report: (p: StepProgress) => Effect.Effect<void>) =>
      Effect.gen(function* () {
        for (const action of script.actions) {
          switch (action._tag) {
            case "progress":
              yield* report(action.progress)
              break
            case "frames":
              yield* TestClock.adjust(Duration.millis(100 * action.n))
              break
            case "inspect":
              // A failed expectation inside a step would become a failed check: keep it for the test.
              yield* during(yield* terminal.lines, terminal).pipe(
                Effect.catchAllDefect((defect) => Effect.sync(() => problems.push(defect)))
              )
              break
          }
        }
        const outcome = script.outcome
        return outcome._tag === "pass" ? { detail: outcome.detail } : yield* fail(outcome.detail, outcome.fix)
      })
    const steps = scripts.map(
      (script): Step => ({
        id: script.id,
        title: script.title,
        requires: script.requires,
        install: (r) => act(script, r.progress),
        verify: () => Effect.succeed({ detail: "verified" }),
        uninstall: (r) => act(script, r.progress)
      })
    )
    const result = yield* runSteps(steps, {
      command,
      selected: null,
      noHistory: false,
      purge: false,
      hooks: "install"
    }).pipe(Effect.provide(TtyRenderer.pipe(Layer.provide(terminal.layer))))
    if (problems.length > 0) throw problems[0]
    return { report: result, screen: yield* terminal.lines }
  })

/** Exactly what the finished run must show: the header, every row once in display order, the summary. */
const expectedScreen = (report: Report) => [
  `blctx ${report.command} codex`,
  ...report.checks.flatMap((check) => checkLines(check, plainStyle, false)),
  summaryLine(report, plainStyle)
]

const titles = installRun.map((s) => s.title)

/**
 * Lines as a person reads them: a row (or fix line) the renderer wrapped between words is joined
 * back, its hanging indent read as the space it replaced.
 */
const unwrapped = (lines: ReadonlyArray<string>) =>
  lines
    .join("\n")
    .replace(/\n +(?!fix:)/g, " ")
    .replace(/ +/g, " ")
    .split("\n")

const expectEachRowOnce = (screen: Screen, report: Report) => {
  const texts = unwrapped(screen.map((l) => l.text))
  for (const check of report.checks) {
    expect(texts.filter((t) => rowTitle(t, titles) === check.title)).toHaveLength(1)
    // Intact: the whole row (and its fix line) is there, reconstructed from however many lines it wrapped onto.
    for (const line of unwrapped(checkLines(check, plainStyle, false))) expect(texts).toContain(line)
  }
  expect(texts.filter((t) => t === summaryLine(report, plainStyle))).toHaveLength(1)
  expect(texts).toEqual(unwrapped(expectedScreen(report)))
}

/** Mid-run: rows printed so far, then one single-line live row per step that is not printed yet. */
const expectLiveScreen = (screen: Screen, terminal: EmulatedTerminal) =>
  Effect.sync(() => {
    const columns = terminal.columns()
    const rows = screen.filter((l) => rowTitle(l.text, titles) !== undefined)
    for (const title of titles) {
      expect(rows.filter((l) => rowTitle(l.text, titles) === title)).toHaveLength(1)
    }
    expect(rows.map((l) => rowTitle(l.text, titles))).toEqual(titles)
    const firstLive = screen.findIndex((l) => l.text.startsWith("○") || /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.test(l.text))
    expect(firstLive).toBeGreaterThan(0)
    for (const line of screen.slice(firstLive)) {
      expect(line.physical).toBe(1)
      expect(line.text.length).toBeLessThan(columns)
    }
  })

describe("TtyRenderer on an emulated terminal", () => {
  for (const columns of [80, 160, 250]) {
    it.scoped(`install at ${columns} columns: every step once, in order, in full, then the summary`, () =>
      Effect.gen(function* () {
        const spinners: Array<string> = []
        const { report, screen } = yield* run("install", installRun, { columns, rows: 50 }, (live, terminal) => {
          spinners.push(...live.flatMap((l) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.exec(l.text) ?? []))
          return expectLiveScreen(live, terminal)
        })
        // One running row at each look, and the spinner moved on between them (the clock drove it).
        expect(spinners).toHaveLength(3)
        expect(new Set(spinners).size).toBe(3)
        expect(report.checks.map((c) => c.status)).toEqual([
          "passed",
          "passed",
          "failed",
          "failed",
          "failed",
          "passed",
          "passed",
          "failed",
          "blocked",
          "blocked",
          "passed"
        ])
        expectEachRowOnce(screen, report)
        // The long rows were wrapped by the renderer, between words, never by the terminal: each
        // line fits but a single word wider than the screen (a URL stands alone, uncut), and at 80
        // columns some rows really took several.
        for (const line of screen) if (line.physical > 1) expect(line.text.trim()).not.toContain(" ")
        if (columns === 80) expect(screen.length).toBeGreaterThan(expectedScreen(report).length + 3)
      })
    )
  }

  it.scoped("uninstall finishes rows in reverse; each is still printed once, in display order", () =>
    Effect.gen(function* () {
      const scripts = installRun.map((s) => ({ ...s, requires: [] }))
      let inspected = 0
      const { report, screen } = yield* run("uninstall", scripts, { columns: 100, rows: 40 }, (live, terminal) =>
        Effect.sync(() => {
          const cols = terminal.columns()
          inspected += 1
          // Nothing is final until the first row is: every row is still one live line.
          expect(live.filter((l) => rowTitle(l.text, titles) !== undefined).map((l) => l.physical)).toEqual(
            titles.map(() => 1)
          )
          expect(live.every((l) => l.text.length < cols)).toBe(true)
        })
      )
      expect(inspected).toBe(3)
      expectEachRowOnce(screen, report)
      expect(screen.at(-1)?.text).toMatch(/^Uninstall incomplete: /)
    })
  )

  it.scoped("on a terminal shorter than the checklist, the live region still fits the screen", () =>
    Effect.gen(function* () {
      const more: Array<string> = []
      const { report, screen } = yield* run("install", installRun, { columns: 80, rows: 6 }, (live) =>
        Effect.sync(() => {
          const firstLive = live.findIndex((l) => l.text.startsWith("○") || /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.test(l.text))
          const region = live.slice(firstLive)
          // Five lines at most (the cursor takes the sixth), each a single line, no row twice.
          expect(region.length).toBeLessThanOrEqual(5)
          expect(region.every((l) => l.physical === 1)).toBe(true)
          for (const title of titles) {
            expect(live.filter((l) => rowTitle(l.text, titles) === title).length).toBeLessThanOrEqual(1)
          }
          more.push(...region.filter((l) => l.text.startsWith("…")).map((l) => l.text))
        })
      )
      // Seven steps are left while the model downloads, six during discovery: four rows and a line for the rest.
      expect(more).toEqual(["… 3 more steps", "… 2 more steps"])
      expectEachRowOnce(screen, report)
    })
  )

  for (const widths of [
    [160, 80],
    [80, 250, 100]
  ]) {
    it.scoped(`resized ${widths.join(" → ")} mid-run: every step once, in order, in full`, () =>
      Effect.gen(function* () {
        const [start = 80, ...later] = widths
        let inspected = 0
        // Resize while long rows are printed and live rows are drawn, then keep the spinner going.
        const scripts = installRun.map((s) => ({
          ...s,
          actions: s.actions.flatMap((a): ReadonlyArray<Action> => (a._tag === "inspect" ? [a, frames(2)] : [a]))
        }))
        const { report, screen } = yield* run("install", scripts, { columns: start, rows: 50 }, (live, terminal) =>
          Effect.gen(function* () {
            yield* expectLiveScreen(live, terminal)
            const width = later[inspected]
            inspected += 1
            if (width === undefined) return
            yield* terminal.resize(width, 50)
            // Redrawn for the new width at once: still one line per live row, every step once.
            yield* expectLiveScreen(yield* terminal.lines, terminal)
          })
        )
        expect(inspected).toBe(3)
        expectEachRowOnce(screen, report)
      })
    )
  }
})

describe("PlainRenderer", () => {
  it.live("prints each row once, in display order, when checks finish out of order", () =>
    Effect.gen(function* () {
      const written: Array<string> = []
      const sink = Layer.succeed(TerminalSink, {
        write: (text) => Effect.sync(() => void written.push(text)),
        size: Effect.succeed({ columns: 80, rows: 24 }),
        resized: Stream.empty
      })
      // codex_mcp finishes only after claude_mcp, which comes later in display order.
      const claudeDone = yield* Deferred.make<void>()
      const step = (id: StepId, verify: Step["verify"]): Step => ({
        id,
        title: id,
        requires: [],
        install: verify,
        verify,
        uninstall: verify
      })
      const steps = [
        step("codex_mcp", () => Effect.as(Deferred.await(claudeDone), { detail: "codex ok" })),
        step("claude_mcp", () => Effect.as(Deferred.succeed(claudeDone, undefined), { detail: "claude ok" }))
      ]
      yield* runSteps(steps, {
        command: "status",
        selected: null,
        noHistory: false,
        purge: false,
        hooks: "default"
      }).pipe(Effect.provide(PlainRenderer.pipe(Layer.provide(sink))), Effect.timeout("5 seconds"))
      const lines = written.join("").split("\n")
      const codex = lines.findIndex((l) => l.includes("codex ok"))
      const claude = lines.findIndex((l) => l.includes("claude ok"))
      expect(codex).toBeGreaterThan(0)
      expect(claude).toBe(codex + 1)
      expect(lines.filter((l) => l.includes(" ok"))).toHaveLength(2)
    })
  )
})
