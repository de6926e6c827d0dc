import { describe, expect, it } from "@effect/vitest"
import { Check, Report } from "../domain/report.js"
import {
  ansiStyle,
  checkLines,
  displayWidth,
  fitLine,
  plainStyle,
  progressBar,
  sanitizeForTerminal,
  summaryLine
} from "./render-text.js"

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

  describe("summaryLine speaks for its command", () => {
    const report = (
      command: Report["command"],
      checks: ReadonlyArray<Check>,
      over: { readonly ready?: boolean; readonly selected?: Report["selected_step"] } = {}
    ) =>
      new Report({
        command,
        target: "codex",
        ready: over.ready ?? false,
        exit_code: checks.every((c) => c.status === "passed" || c.status === "skipped") ? 0 : 1,
        selected_step: over.selected ?? null,
        checks
      })
    const green = [check("passed"), check("passed"), check("skipped")]
    const red = [check("passed"), check("failed", "fix it"), check("blocked", "fix the other")]
    const line = (r: Report) => summaryLine(r, plainStyle)

    it("install: ready, a selected step, or not ready with where to look", () => {
      expect(line(report("install", green, { ready: true }))).toMatchInlineSnapshot(
        `"Ready: 2 passed, 0 failed, 0 blocked, 1 skipped."`
      )
      expect(line(report("install", green, { selected: "data_directory" }))).toMatchInlineSnapshot(
        `"Selected steps installed: 2 passed, 0 failed, 0 blocked, 1 skipped. Run \`blctx status\` to check every step."`
      )
      expect(line(report("install", red))).toMatchInlineSnapshot(
        `"Not ready: 1 passed, 1 failed, 1 blocked, 0 skipped. Follow the fixes above; \`blctx doctor\` checks deeper."`
      )
    })

    it("status: ready, selected checks passed, or not ready pointing at doctor", () => {
      expect(line(report("status", green, { ready: true }))).toMatchInlineSnapshot(
        `"Ready: 2 passed, 0 failed, 0 blocked, 1 skipped."`
      )
      expect(line(report("status", green, { selected: "data_directory" }))).toMatchInlineSnapshot(
        `"Selected checks passed: 2 passed, 0 failed, 0 blocked, 1 skipped."`
      )
      expect(line(report("status", red))).toMatchInlineSnapshot(
        `"Not ready: 1 passed, 1 failed, 1 blocked, 0 skipped. Run \`blctx doctor\` for remediation."`
      )
    })

    it("doctor: never tells a person to run doctor", () => {
      expect(line(report("doctor", green, { ready: true }))).toMatchInlineSnapshot(
        `"Ready: 2 passed, 0 failed, 0 blocked, 1 skipped."`
      )
      expect(line(report("doctor", green, { selected: "data_directory" }))).toMatchInlineSnapshot(
        `"Selected checks passed: 2 passed, 0 failed, 0 blocked, 1 skipped."`
      )
      expect(line(report("doctor", red))).toMatchInlineSnapshot(
        `"Not ready: 1 passed, 1 failed, 1 blocked, 0 skipped. Follow the fixes above."`
      )
      expect(line(report("doctor", red))).not.toContain("blctx doctor")
    })

    it("uninstall: says what happened, never whether blctx is ready", () => {
      expect(line(report("uninstall", [check("passed"), check("passed")]))).toMatchInlineSnapshot(
        `"Uninstalled: 2 steps done; each row says what was removed or kept."`
      )
      expect(line(report("uninstall", [check("passed")]))).toMatchInlineSnapshot(
        `"Uninstalled: 1 step done; each row says what was removed or kept."`
      )
      expect(
        line(report("uninstall", [check("passed"), check("failed", "x"), check("failed", "y")]))
      ).toMatchInlineSnapshot(`"Uninstall incomplete: 2 of 3 steps failed; see the failed steps above."`)
      for (const checks of [green, red]) {
        expect(line(report("uninstall", checks))).not.toMatch(/ready|doctor/i)
      }
    })
  })

  it("measures styled text by the columns it may take, erring wide", () => {
    expect(displayWidth("abc")).toBe(3)
    expect(displayWidth(ansiStyle.green("abc"))).toBe(3)
    // Wide, fullwidth, emoji and ambiguous characters all count as two.
    expect(displayWidth("日本")).toBe(4)
    expect(displayWidth("✓ ○ – 😀")).toBe(11)
  })

  it("fits text to one line: no tab or newline, cut with an ellipsis, styles closed", () => {
    expect(fitLine("short", 10)).toBe("short")
    expect(fitLine("a\tb\nc", 10)).toBe("a b c")
    expect(fitLine("abcdefghij", 6)).toBe("abcd…")
    expect(displayWidth(fitLine("日本語のテキスト", 7))).toBeLessThanOrEqual(7)
    const cut = fitLine(`${ansiStyle.bold("title")} ${"x".repeat(50)}`, 12)
    expect(displayWidth(cut)).toBeLessThanOrEqual(12)
    expect(cut.endsWith("\u001b[0m")).toBe(true)
    expect(cut).toContain("\u001b[1mtitle\u001b[22m")
    expect(fitLine("abc", 1)).toBe("")
  })
})
