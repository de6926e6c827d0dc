/**
 * `npm run bench`: runs every benchmark in turn and prints figures and ratios, then one table of
 * the key figures, also written to bench/results/latest.json. Figures are measurements on the
 * machine at hand, never assertions.
 */
import { section } from "./measure.js"
import { writeSummary } from "./summary.js"

interface Benchmark {
  readonly name: string
  readonly run: () => Promise<void>
}

const benchmarks: ReadonlyArray<Benchmark> = [
  { name: "installer", run: () => import("./installer.bench.js").then((m) => m.run()) },
  { name: "daemon", run: () => import("./daemon.bench.js").then((m) => m.runDaemonBench()) },
  { name: "transcripts", run: () => import("./transcripts.bench.js").then((m) => m.run()) },
  { name: "embedding", run: () => import("./embedding.bench.js").then((m) => m.run()) },
  { name: "importer", run: () => import("./importer.bench.js").then((m) => m.run()) },
  { name: "search", run: () => import("./search.bench.js").then((m) => m.run()) },
  { name: "mcp", run: () => import("./mcp.bench.js").then((m) => m.run()) },
  { name: "hooks", run: () => import("./hooks.bench.js").then((m) => m.run()) },
  { name: "cli", run: () => import("./cli.bench.js").then((m) => m.run()) },
  { name: "recall", run: () => import("./recall/recall.bench.js").then((m) => m.run()) },
  { name: "ui", run: () => import("./ui.bench.js").then((m) => m.run()) }
]

const only = process.argv.slice(2)
const ran: Array<string> = []
for (const b of benchmarks) {
  if (only.length > 0 && !only.includes(b.name)) continue
  section(b.name)
  await b.run()
  ran.push(b.name)
}
writeSummary(ran)
