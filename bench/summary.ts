import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Either, Schema } from "effect"
import { type Figure, formatFigure, recorded } from "./measure.js"

/** Where `npm run bench` writes its figures (the repository's `bench/results/latest.json`). */
export const RESULTS_FILE = NodePath.join(
  NodePath.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "bench",
  "results",
  "latest.json"
)

/** The machine the figures were measured on, as far as Node can tell. */
const machine = () => ({
  cpus: Os.cpus().length,
  cpu_model: Os.cpus()[0]?.model ?? "unknown",
  memory_gib: Number((Os.totalmem() / 1024 ** 3).toFixed(1)),
  load_average_at_end: Os.loadavg().map((l) => Number(l.toFixed(2))),
  node: process.version,
  platform: `${process.platform} ${process.arch}`
})

const row = (cells: ReadonlyArray<string>, widths: ReadonlyArray<number>) =>
  cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ")

/** The key figures of every benchmark that ran, as one table. */
export const summaryTable = (figures: ReadonlyArray<Figure>): string => {
  const rows = figures.map((f) => [
    f.bench,
    f.figure,
    formatFigure(f.value),
    f.unit,
    f.reference === undefined
      ? ""
      : `${f.reference.name} ${formatFigure(f.reference.value)}${f.reference.reported === undefined ? "" : ` (${f.reference.reported})`}`,
    f.ratio === undefined ? "" : `${f.ratio.toFixed(2)}x`
  ])
  const header = ["bench", "figure", "value", "unit", "reference", "ratio"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  return [
    row(header, widths),
    row(
      widths.map((w) => "-".repeat(w)),
      widths
    ),
    ...rows.map((r) => row(r, widths))
  ].join("\n")
}

/** What a new run keeps of the file before it: the runs, figures and lines of benchmarks it did not run. */
const EarlierRun = Schema.Struct({
  measured_at: Schema.String,
  machine: Schema.Unknown,
  environment: Schema.Unknown,
  benchmarks: Schema.Array(Schema.String)
})
const ResultsFile = Schema.parseJson(
  Schema.Struct({
    ...EarlierRun.fields,
    earlier_runs: Schema.optionalWith(Schema.Array(EarlierRun), { default: () => [] }),
    figures: Schema.Array(Schema.Struct({ bench: Schema.String }, { key: Schema.String, value: Schema.Unknown })),
    lines: Schema.Array(Schema.Struct({ bench: Schema.String }, { key: Schema.String, value: Schema.Unknown }))
  })
)

/**
 * The previous file's part that this run leaves standing: `npm run bench -- NAME` replaces NAME's
 * figures and lines and keeps every other benchmark's, each earlier run named with its date and
 * machine. An unreadable or missing file keeps nothing.
 */
export const keptFromEarlier = (text: string | undefined, ran: ReadonlyArray<string>) => {
  const previous = text === undefined ? undefined : Either.getOrUndefined(Schema.decodeUnknownEither(ResultsFile)(text))
  if (previous === undefined) return { runs: [], benchmarks: [], figures: [], lines: [] }
  const keeps = (bench: string) => !ran.includes(bench)
  const runs = [{ ...previous, earlier_runs: undefined }, ...previous.earlier_runs]
    .map((r) => ({
      measured_at: r.measured_at,
      machine: r.machine,
      environment: r.environment,
      benchmarks: r.benchmarks.filter(keeps)
    }))
    .filter((r) => r.benchmarks.length > 0)
  return {
    runs,
    benchmarks: runs.flatMap((r) => r.benchmarks),
    figures: previous.figures.filter((f) => keeps(f.bench)),
    lines: previous.lines.filter((l) => keeps(l.bench))
  }
}

/**
 * Prints the table and writes every figure and printed line, with the machine, to `RESULTS_FILE`,
 * keeping the figures of the benchmarks this run did not run (`earlier_runs` says when those were measured).
 */
export const writeSummary = (benchmarks: ReadonlyArray<string>) => {
  const { printed, figures } = recorded()
  console.log(`\n## summary (${benchmarks.join(", ")})\n`)
  console.log(figures.length === 0 ? "  no key figures recorded" : summaryTable(figures))
  mkdirSync(NodePath.dirname(RESULTS_FILE), { recursive: true })
  const earlier = (() => {
    try {
      return readFileSync(RESULTS_FILE, "utf8")
    } catch {
      return undefined
    }
  })()
  const kept = keptFromEarlier(earlier, benchmarks)
  const document = {
    measured_at: new Date().toISOString(),
    machine: machine(),
    environment: {
      BLCTX_TEST_MODEL_DATA: process.env.BLCTX_TEST_MODEL_DATA !== undefined,
      BLCTX_BENCH_MODEL_DIR: process.env.BLCTX_BENCH_MODEL_DIR !== undefined,
      BLCTX_BENCH_LARGE: process.env.BLCTX_BENCH_LARGE === "1"
    },
    benchmarks,
    ...(kept.runs.length === 0 ? {} : { earlier_runs: kept.runs }),
    figures: [...kept.figures, ...figures],
    lines: [...kept.lines, ...printed]
  }
  writeFileSync(RESULTS_FILE, `${JSON.stringify(document, null, 2)}\n`)
  console.log(`\n  written to bench/results/latest.json`)
}
