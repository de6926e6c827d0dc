import type { Check, Report } from "../domain/report.js"
import type { StepProgress } from "./step.js"

/** ANSI styling, or none at all: the same layout either way. */
export interface Style {
  readonly green: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly dim: (s: string) => string
  readonly bold: (s: string) => string
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`
export const ansiStyle: Style = {
  green: wrap(32, 39),
  red: wrap(31, 39),
  yellow: wrap(33, 39),
  dim: wrap(2, 22),
  bold: wrap(1, 22)
}
const same = (s: string) => s
export const plainStyle: Style = { green: same, red: same, yellow: same, dim: same, bold: same }

/** Whether a UTF-16 code unit is a C0/C1 control character other than tab and newline. */
const isControl = (code: number) => (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f)

/** Escapes terminal control characters in text that came from outside (paths, details, transcripts). */
export const sanitizeForTerminal = (text: string): string => {
  let out = ""
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    out += isControl(code) ? `\\x${code.toString(16).padStart(2, "0")}` : ch
  }
  return out
}

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

/** The finished row of a step, plus its remediation on the next line when there is one. */
export const checkLines = (check: Check, style: Style, plain: boolean): ReadonlyArray<string> => {
  const head = plain ? `[${check.status}]` : checkSymbol(check, style)
  const lines = [`${head} ${style.bold(check.title)} (${check.id}): ${sanitizeForTerminal(check.detail)}`]
  if (check.remediation !== undefined) lines.push(`    ${style.dim("fix:")} ${sanitizeForTerminal(check.remediation)}`)
  return lines
}

export const progressBar = (progress: StepProgress, width = 20): string => {
  if (progress.fraction === undefined) return progress.label
  const f = Math.min(1, Math.max(0, progress.fraction))
  const filled = Math.round(f * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${Math.floor(f * 100)}% ${progress.label}`
}

export const summaryLine = (report: Report, style: Style): string => {
  const count = (status: Check["status"]) => report.checks.filter((c) => c.status === status).length
  const parts = [
    `${count("passed")} passed`,
    `${count("failed")} failed`,
    `${count("blocked")} blocked`,
    `${count("skipped")} skipped`
  ].join(", ")
  if (report.ready) return style.green(`Ready: ${parts}.`)
  if (report.exit_code === 0) return style.green(`Selected checks passed: ${parts}.`)
  return style.red(`Not ready: ${parts}. Run \`blctx doctor\` for remediation.`)
}
