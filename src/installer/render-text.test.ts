import { describe, expect, it } from "@effect/vitest"
import { Check, Report } from "../domain/report.js"
import { checkLines, plainStyle, progressBar, sanitizeForTerminal, summaryLine } from "./render-text.js"

const check = (status: Check["status"], remediation?: string) =>
  new Check({
    id: "data_directory",
    title: "Private data directory",
    status,
    detail: "d",
    dependencies: [],
    ...(remediation === undefined ? {} : { remediation })
  })

describe("render-text", () => {
  it("escapes control characters but keeps tabs, newlines and unicode", () => {
    expect(sanitizeForTerminal("a\u001b[31mred\u0007\tb\nc ✓\u009b")).toBe("a\\x1b[31mred\\x07\tb\nc ✓\\x9b")
  })

  it("draws a bounded progress bar", () => {
    expect(progressBar({ label: "download", fraction: 0.5 }, 10)).toBe("[#####-----] 50% download")
    expect(progressBar({ label: "x", fraction: 7 }, 4)).toBe("[####] 100% x")
    expect(progressBar({ label: "loading" })).toBe("loading")
  })

  it("prints the status word in plain mode and the remediation on its own line", () => {
    expect(checkLines(check("failed", "chmod 700 x"), plainStyle, true)).toEqual([
      "[failed] Private data directory (data_directory): d",
      "    fix: chmod 700 x"
    ])
  })

  it("summarises counts and readiness", () => {
    const report = (checks: ReadonlyArray<Check>, ready: boolean, exit_code: number) =>
      new Report({ command: "status", target: "codex", ready, exit_code, selected_step: null, checks })
    expect(summaryLine(report([check("passed")], true, 0), plainStyle)).toBe(
      "Ready: 1 passed, 0 failed, 0 blocked, 0 skipped."
    )
    expect(summaryLine(report([check("passed"), check("blocked")], false, 1), plainStyle)).toContain("Not ready")
  })
})
