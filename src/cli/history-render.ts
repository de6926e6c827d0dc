import type { Style } from "../installer/render-text.js"
import type { JobView } from "../jobs/job.js"
import type { CaptureStatus } from "../retrieval/capture-status.js"
import type { ContextResponse } from "../retrieval/context.js"
import type { ContextStatusResponse } from "../retrieval/context-status.js"
import type { RecentResponse } from "../retrieval/recent.js"
import { sanitizeDeep, sanitizeForTerminal } from "../terminal/sanitize.js"
import { oneLine, when, whose } from "./search-render.js"

/**
 * Readable renderings of history answers (`--pretty` or a TTY). JSON stays the default for scripts.
 * Each renderer first passes the whole answer through `sanitizeDeep`, so no field — text,
 * timestamp, cwd, project, path, id — can reach the terminal with a control character in it.
 */

export const renderRecent = (answer: RecentResponse, style: Style): string => {
  const r = sanitizeDeep(answer)
  const lines = [style.bold(`${r.turns.length} turns`) + style.dim(` (${r.since ?? "…"} to ${r.until ?? "now"})`)]
  for (const turn of r.turns) {
    const first = turn.messages[0]
    // The turn's first context id: `blctx context ID` shows the turn and what follows it.
    const cite = first === undefined ? "" : `  context ${first.context_id}`
    lines.push(
      `${style.bold(when(turn.last_activity))}  ${first === undefined ? "" : `${whose(first)}  `}${style.dim(turn.project ?? "no project")}  ${style.dim(`${turn.session_id ?? ""}${cite}`)}`
    )
    for (const m of turn.messages) lines.push(`   ${m.role === "user" ? "›" : "‹"} ${oneLine(m.text, 200)}`)
    if (turn.messages_not_shown > 0) lines.push(style.dim(`   … ${turn.messages_not_shown} more messages`))
  }
  if (r.unknown_timestamps > 0)
    lines.push(style.dim(`${r.unknown_timestamps} messages have no known time and are never in a date range.`))
  if (r.next_offset !== null) lines.push(style.dim(`More: --offset ${r.next_offset}`))
  return lines.join("\n")
}

export const renderContext = (answer: ContextResponse, style: Style): string => {
  const r = sanitizeDeep(answer)
  const lines = [
    style.bold(`Context ${r.context_id}`) + style.dim(`  session ${r.session_id ?? "?"}  ${r.project ?? ""}`)
  ]
  for (const m of r.messages) {
    const mark = m.is_anchor ? style.yellow("▶") : " "
    lines.push(`${mark} ${style.bold(`#${m.index}`)} ${whose(m)}  ${m.role}/${m.kind}  ${style.dim(when(m.timestamp))}`)
    lines.push(sanitizeForTerminal(m.text))
  }
  if (r.next_offset !== null) {
    lines.push(
      style.dim(
        `More: --offset ${r.next_offset}${r.next_char_offset === null ? "" : ` --char-offset ${r.next_char_offset}`}`
      )
    )
  }
  return lines.join("\n")
}

/** What each kind's progress counts: both sides of done/total are in this unit. */
const PROGRESS_UNITS: Readonly<Record<string, string>> = {
  import: "files",
  repair: "chunks embedded",
  maintenance: "steps"
}

/** `done/total unit`; a total below done (which the job store never records) is shown as unknown. */
export const renderProgress = (job: Pick<JobView, "kind" | "progress_done" | "progress_total">): string => {
  const total = job.progress_total === null || job.progress_total < job.progress_done ? "?" : job.progress_total
  const unit = PROGRESS_UNITS[job.kind]
  return `${job.progress_done}/${total}${unit === undefined ? "" : ` ${unit}`}`
}

export const renderJob = (answer: JobView, style: Style): string => {
  const job = sanitizeDeep(answer)
  const counts = Object.entries(job.counts)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")
  return [
    `${style.bold(`job ${job.id}`)} ${job.kind} ${job.state} ${renderProgress(job)}`,
    counts === "" ? "" : style.dim(counts),
    job.error === null ? "" : style.red(sanitizeForTerminal(job.error))
  ]
    .filter((l) => l !== "")
    .join("\n")
}

/** One line on what the hooks captured; says so when nothing was. */
export const renderCapture = (capture: CaptureStatus): string => {
  const e = capture.events
  const total = e.SessionStart + e.UserPromptSubmit + e.Stop + e.SessionEnd
  if (total === 0 && capture.errors === 0 && capture.pending === 0) {
    return "capture: no hook events (hooks not installed, or no session since)"
  }
  const parts = [
    `capture: ${total} hook events (${e.SessionStart} SessionStart, ${e.UserPromptSubmit} UserPromptSubmit, ${e.Stop} Stop, ${e.SessionEnd} SessionEnd)`,
    `${capture.indexed_sessions} sessions indexed, ${capture.pending} pending, ${capture.null_paths} awaiting a transcript path, ${capture.errors} errors${capture.refused > 0 ? ` (${capture.refused} transcript paths refused)` : ""}`
  ]
  if (capture.last_event_at !== null) parts.push(`last event ${when(capture.last_event_at)}`)
  const line = parts.join("; ")
  return capture.last_error === null ? line : `${line}\n  last error: ${capture.last_error}`
}

/** Skipped imports the daemon tries again: how many, and the soonest few with their attempts and next try. */
const renderRetries = (c: ContextStatusResponse["coverage"]): ReadonlyArray<string> =>
  c.import_retries_waiting === 0
    ? []
    : [
        `${c.import_retries_waiting} skipped file${c.import_retries_waiting === 1 ? "" : "s"} waiting to be imported again:`,
        ...c.import_retries
          .slice(0, 5)
          .map(
            (r) => `  ${r.path}: skipped ${r.attempts} time${r.attempts === 1 ? "" : "s"}, next try ${r.next_retry_at}`
          )
      ]

export const renderStatus = (answer: ContextStatusResponse, style: Style): string => {
  const s = sanitizeDeep(answer)
  const c = s.coverage
  const lines = [
    `${style.bold("index")} ${s.index_state}, queries ${s.query_mode}${s.query_mode_reason === null ? "" : ` (${s.query_mode_reason})`}`,
    `${c.files.total} files (${c.files.indexed} indexed, ${c.files.partial} partial, ${c.files.conflict} conflicts), ${c.sessions} sessions, ${c.messages} messages, ${c.chunks} chunks`,
    `vectors: ${c.vectors.map((v) => `${v.chunks} for ${v.fingerprint}`).join(", ") || "none"}; ${c.vectors_pending} pending`,
    `${c.sources_changed} sources changed and ${c.sources_missing} missing since import${c.sources_unreadable > 0 ? `, ${c.sources_unreadable} unreadable (permission denied)` : ""}; ${c.redactions} secrets redacted`,
    renderCapture(s.capture),
    ...renderRetries(c),
    style.dim(c.capture)
  ]
  for (const job of s.recent_jobs.slice(0, 5)) lines.push(renderJob(job, style))
  return lines.join("\n")
}
