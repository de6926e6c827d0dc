import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"

/** Small helpers every benchmark uses to print figures the same way. */

export const percentile = (sortedMs: ReadonlyArray<number>, p: number): number => {
  if (sortedMs.length === 0) return Number.NaN
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1))
  return sortedMs[index] ?? Number.NaN
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** Every line a benchmark printed and every key figure, for the summary table and its JSON file. */
export interface PrintedLine {
  readonly bench: string
  readonly name: string
  readonly value: string
}
export interface Figure {
  readonly bench: string
  readonly figure: string
  readonly value: number
  readonly unit: string
  /** What the value is compared with: measured in the same run, unless `reported` says where it comes from. */
  readonly reference?: { readonly name: string; readonly value: number; readonly reported?: string }
  /** value / reference.value */
  readonly ratio?: number
  readonly goal?: string
}
const printed: Array<PrintedLine> = []
const figures: Array<Figure> = []
let currentBench = ""

export const line = (name: string, value: string) => {
  printed.push({ bench: currentBench, name: name.trim(), value })
  console.log(`  ${name.padEnd(44)} ${value}`)
}

export const section = (title: string) => {
  currentBench = title
  console.log(`\n## ${title}`)
}

const shown = (value: number) =>
  Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2)

/**
 * A key figure: printed like any line, and kept for the summary table and
 * `bench/results/latest.json`, with its reference and their ratio.
 */
export const figure = (
  name: string,
  value: number,
  unit: string,
  options: { readonly reference?: Figure["reference"]; readonly goal?: string } = {}
) => {
  const reference = options.reference
  const ratio = reference === undefined || reference.value === 0 ? undefined : value / reference.value
  figures.push({
    bench: currentBench,
    figure: name,
    value,
    unit,
    ...(reference === undefined ? {} : { reference }),
    ...(ratio === undefined ? {} : { ratio }),
    ...(options.goal === undefined ? {} : { goal: options.goal })
  })
  const against = reference === undefined || ratio === undefined ? "" : ` (${ratio.toFixed(2)}x ${reference.name})`
  const goal = options.goal === undefined ? "" : ` [goal: ${options.goal}]`
  line(name, `${shown(value)} ${unit}${against}${goal}`)
}

export const recorded = () => ({ printed: [...printed], figures: [...figures] })

export { shown as formatFigure }

/** Times `f` `n` times and returns the sorted durations in milliseconds. */
export const timeMany = async (n: number, f: () => Promise<unknown>): Promise<Array<number>> => {
  const out: Array<number> = []
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint()
    await f()
    out.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return out.sort((a, b) => a - b)
}

/** Resident memory of a process, from /proc (Linux). */
export const rssOf = (pid: number): number => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0")
  return kb * 1024
}

/** A throwaway HOME for a benchmark, with every XDG and Codex location under it (or that of `home`, kept). */
export const benchHome = (prefix: string, home = mkdtempSync(NodePath.join(tmpdir(), prefix))) => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: "",
    XDG_STATE_HOME: "",
    XDG_CONFIG_HOME: "",
    XDG_CACHE_HOME: "",
    CODEX_HOME: "",
    BLCTX_SERVICE_MANAGER: "detached"
  }
  return {
    home,
    env,
    socketPath: NodePath.join(home, ".local", "state", "blctx", "blctxd.sock"),
    dispose: () => rmSync(home, { recursive: true, force: true })
  }
}

/** One JSON line of blctxd's log. */
export interface DaemonLogEntry {
  readonly message: string
  readonly annotations?: Record<string, unknown>
}

/**
 * The first line of a daemon log (JSON lines) that `matches`, looked for every half second until
 * `timeoutMs`; undefined if none came. Benchmarks may wait on time; tests wait on events instead.
 */
export const waitForLogLine = async (
  path: string,
  matches: (entry: DaemonLogEntry) => boolean,
  timeoutMs: number
): Promise<DaemonLogEntry | undefined> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const text = (() => {
      try {
        return readFileSync(path, "utf8")
      } catch {
        return ""
      }
    })()
    for (const raw of text.split("\n")) {
      if (!raw.startsWith("{")) continue
      try {
        const entry = JSON.parse(raw) as DaemonLogEntry
        if (typeof entry.message === "string" && matches(entry)) return entry
      } catch {
        // a line being written
      }
    }
    if (Date.now() > deadline) return undefined
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/** The daemon log's last lines in a bench home, printed when a run fails (the home goes with it). */
export const daemonLogTail = (home: string, lines = 30): string => {
  try {
    return readFileSync(NodePath.join(home, ".local", "state", "blctx", "blctxd.log"), "utf8")
      .split("\n")
      .slice(-lines)
      .join("\n")
  } catch {
    return "(no daemon log)"
  }
}
