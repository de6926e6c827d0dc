import { describe, expect, it } from "vitest"
import { keptFromEarlier } from "./summary.js"

const file = (document: object) => JSON.stringify(document)

describe("the results file after a run of some benchmarks", () => {
  const earlier = file({
    measured_at: "2026-12-01T19:57:21.682Z",
    machine: { cpus: 2 },
    environment: { BLCTX_BENCH_LARGE: false },
    benchmarks: ["search", "ui"],
    earlier_runs: [
      { measured_at: "2026-11-30T10:00:00.000Z", machine: { cpus: 2 }, environment: {}, benchmarks: ["hooks"] }
    ],
    figures: [
      { bench: "search", figure: "search p50", value: 41, unit: "ms" },
      { bench: "ui", figure: "page load p50", value: 900, unit: "ms" },
      { bench: "hooks", figure: "hook p95", value: 224, unit: "ms" }
    ],
    lines: [
      { bench: "search", name: "chunks", value: "100000" },
      { bench: "ui", name: "cold", value: "1 s" }
    ]
  })

  it("keeps the other benchmarks' figures and lines, each with the run that measured it", () => {
    const kept = keptFromEarlier(earlier, ["ui"])
    expect(kept.figures.map((f) => f.bench)).toEqual(["search", "hooks"])
    expect(kept.lines.map((l) => l.bench)).toEqual(["search"])
    expect(kept.benchmarks).toEqual(["search", "hooks"])
    expect(kept.runs.map((r) => [r.measured_at, r.benchmarks])).toEqual([
      ["2026-12-01T19:57:21.682Z", ["search"]],
      ["2026-11-30T10:00:00.000Z", ["hooks"]]
    ])
  })

  it("keeps nothing of a benchmark run again, nor of a missing or unreadable file", () => {
    expect(keptFromEarlier(earlier, ["search", "ui", "hooks"]).figures).toEqual([])
    expect(keptFromEarlier(earlier, ["search", "ui", "hooks"]).runs).toEqual([])
    expect(keptFromEarlier(undefined, ["ui"]).figures).toEqual([])
    expect(keptFromEarlier("{ not json", ["ui"]).figures).toEqual([])
  })
})
