import { type Check, ExitCode, type Report, type ReportCommand } from "../domain/report.js"
import { cells, displayWidth } from "../terminal/display-width.js"
import { sanitizeForTerminal } from "../terminal/sanitize.js"
import type { Style } from "../terminal/style.js"
import { wrapSegments } from "../terminal/wrap.js"
import { agentLabel } from "../transcripts/formats/registry.js"
import type { StepProgress } from "./step.js"

export { sanitizeForTerminal } from "../terminal/sanitize.js"
export { ansiStyle, plainStyle, type Style } from "../terminal/style.js"

const symbols = { passed: "✓", failed: "✗", blocked: "–", skipped: "–" } as const

export const checkSymbol = (check: Check, style: Style): string => {
  switch (check.status) {
    case "passed":
      return style.green(symbols.passed)
    case "failed":
      return style.red(symbols.failed)
    case "blocked":
      return style.yellow(symbols.blocked)
    case "skipped":
      return style.dim(symbols.skipped)
  }
}

/**
 * The finished row of a step, plus its remediation on the next line when there is one. With a
 * terminal `width`, each is wrapped between words with a hanging indent (a path or id longer than
 * the line stands alone, uncut), so an 80-column terminal never breaks a word; without one, each
 * is one line, for pipes and logs.
 */
export const checkLines = (check: Check, style: Style, plain: boolean, width?: number): ReadonlyArray<string> => {
  const head = plain ? `[${check.status}]` : checkSymbol(check, style)
  const lines = wrapSegments(
    [
      { text: head },
      { text: ` ${check.title}`, style: style.bold },
      { text: ` (${check.id}): ${sanitizeForTerminal(check.detail)}` }
    ],
    { width, indent: "", hang: "  " }
  )
  if (check.remediation !== undefined) {
    lines.push(
      ...wrapSegments([{ text: "fix:", style: style.dim }, { text: ` ${sanitizeForTerminal(check.remediation)}` }], {
        width,
        indent: "    ",
        hang: "         "
      })
    )
  }
  return lines
}

export const progressBar = (progress: StepProgress, width = 20): string => {
  if (progress.fraction === undefined) return progress.label
  const f = Math.min(1, Math.max(0, progress.fraction))
  const filled = Math.round(f * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.floor(f * 100)}% ${progress.label}`
}

/**
 * The first line of a checklist: the command as it was run, `blctx install claude`, or for a
 * status or doctor of every installed agent, the agents it covers, `blctx status (Codex and
 * Claude Code)`. Agents are named from their transcript format, where each is declared.
 */
export const checklistHeading = (command: ReportCommand, targets: ReadonlyArray<string>, named: boolean): string =>
  named && targets.length === 1
    ? `blctx ${command} ${targets[0]}`
    : `blctx ${command} (${targets.map(agentLabel).join(" and ")})`

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * The last line of a run, in the command's own terms: install, status and doctor say whether
 * blctx is ready (and where to look when it is not); uninstall says whether everything was undone.
 */
const summaryOf = (report: Report): { readonly text: string; readonly good: boolean } => {
  const count = (status: Check["status"]) => report.checks.filter((c) => c.status === status).length
  const parts = [
    `${count("passed")} passed`,
    `${count("failed")} failed`,
    `${count("blocked")} blocked`,
    `${count("skipped")} skipped`
  ].join(", ")
  const ok = report.exit_code === ExitCode.ok
  switch (report.command) {
    case "uninstall": {
      const total = report.checks.length
      if (ok)
        return {
          good: true,
          text: `Uninstalled: ${plural(total, "step")} done; each row says what was removed or kept.`
        }
      const bad = count("failed") + count("blocked")
      return {
        good: false,
        text: `Uninstall incomplete: ${bad} of ${plural(total, "step")} failed; see the failed steps above.`
      }
    }
    case "install":
      if (report.ready) return { good: true, text: `Ready: ${parts}.` }
      if (ok)
        return { good: true, text: `Selected steps installed: ${parts}. Run \`blctx status\` to check every step.` }
      return { good: false, text: `Not ready: ${parts}. Follow the fixes above; \`blctx doctor\` checks deeper.` }
    case "status":
      if (report.ready) return { good: true, text: `Ready: ${parts}.` }
      if (ok) return { good: true, text: `Selected checks passed: ${parts}.` }
      return { good: false, text: `Not ready: ${parts}. Run \`blctx doctor\` for remediation.` }
    case "doctor":
      if (report.ready) return { good: true, text: `Ready: ${parts}.` }
      if (ok) return { good: true, text: `Selected checks passed: ${parts}.` }
      return { good: false, text: `Not ready: ${parts}. Follow the fixes above.` }
  }
}

/** The summary, styled as a whole; with a terminal `width`, wrapped between words. */
export const summaryLine = (report: Report, style: Style, width?: number): string => {
  const { text, good } = summaryOf(report)
  return wrapSegments([{ text, style: good ? style.green : style.red }], { width, indent: "", hang: "  " }).join("\n")
}

export { displayWidth } from "../terminal/display-width.js"

const ELLIPSIS = "…"

/**
 * Styled text made to fit one terminal line of `width` columns: tabs and newlines become spaces,
 * and text that is too wide is cut with an ellipsis (styles are reset after the cut).
 */
export const fitLine = (text: string, width: number): string => {
  const flat = text.replace(/[\t\n]/g, " ")
  if (displayWidth(flat) <= width) return flat
  const room = width - displayWidth(ELLIPSIS)
  let out = ""
  let used = 0
  let styled = false
  for (const cell of cells(flat)) {
    if (cell.width === 0) {
      out += cell.text
      styled = true
    } else if (used + cell.width <= room) {
      out += cell.text
      used += cell.width
    }
  }
  return `${out}${room >= 0 ? ELLIPSIS : ""}${styled ? "\u001b[0m" : ""}`
}
