import { mkdirSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
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

/** Prints the table and writes every figure and printed line, with the machine, to `RESULTS_FILE`. */
export const writeSummary = (benchmarks: ReadonlyArray<string>) => {
  const { printed, figures } = recorded()
  console.log(`\n## summary (${benchmarks.join(", ")})\n`)
  console.log(figures.length === 0 ? "  no key figures recorded" : summaryTable(figures))
  mkdirSync(NodePath.dirname(RESULTS_FILE), { recursive: true })
  const document = {
    measured_at: new Date().toISOString(),
    machine: machine(),
    environment: {
      BLCTX_TEST_MODEL_DATA: process.env.BLCTX_TEST_MODEL_DATA !== undefined,
      BLCTX_BENCH_MODEL_DIR: process.env.BLCTX_BENCH_MODEL_DIR !== undefined,
      BLCTX_BENCH_LARGE: process.env.BLCTX_BENCH_LARGE === "1"
    },
    benchmarks,
    figures,
    lines: printed
  }
  writeFileSync(RESULTS_FILE, `${JSON.stringify(document, null, 2)}\n`)
  console.log(`\n  written to bench/results/latest.json`)
}
