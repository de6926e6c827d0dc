import type { ContextStatusResponse } from "../../retrieval/context-status.js"
import type { IndexActivityResponse } from "../../retrieval/index-activity.js"
import { barChart } from "./bar-chart.js"
import { call } from "./daemon-client.js"
import { el, show } from "./el.js"
import { failureView } from "./failure.js"

/**
 * Index health at a glance: messages and chunks indexed per day (IndexActivity) as bar charts,
 * what waits (vectors, notes), files skipped with their reasons, and what the hooks captured
 * (ContextStatus). Both reads are small: counts, never text.
 */

const DAYS = 90

const stat = (label: string, value: string | number) =>
  el("div", { class: "stat" }, el("dt", {}, label), el("dd", {}, String(value)))

const statusView = (s: ContextStatusResponse) =>
  el(
    "section",
    { class: "status" },
    el("h2", {}, "Index"),
    el(
      "dl",
      { class: "stats" },
      stat("state", s.index_state),
      stat("search", s.query_mode),
      stat("sessions", s.coverage.sessions),
      stat("messages", s.coverage.messages),
      stat("chunks", s.coverage.chunks),
      stat("vectors pending", s.coverage.vectors_pending),
      stat("notes waiting for a vector", s.authored_updates_pending),
      stat("files indexed", `${s.coverage.files.indexed} of ${s.coverage.files.total}`)
    ),
    s.query_mode_reason === null ? null : el("p", { class: "note" }, s.query_mode_reason)
  )

const captureView = (s: ContextStatusResponse) => {
  const c = s.capture
  return el(
    "section",
    { class: "capture" },
    el("h2", {}, "Capture (hooks)"),
    el(
      "dl",
      { class: "stats" },
      stat("session starts", c.events.SessionStart),
      stat("prompts", c.events.UserPromptSubmit),
      stat("stops", c.events.Stop),
      stat("session ends", c.events.SessionEnd),
      stat("sessions indexed", c.indexed_sessions),
      stat("pending", c.pending),
      stat("errors", c.errors),
      stat("last event", c.last_event_at ?? "none")
    ),
    c.last_error === null ? null : el("p", { class: "note" }, `newest error: ${c.last_error}`)
  )
}

const activityView = (a: IndexActivityResponse) =>
  el(
    "section",
    { class: "activity" },
    el("h2", {}, `Indexed per day (last ${DAYS} days)`),
    a.days.length === 0 ? el("p", {}, "Nothing indexed in that time.") : null,
    barChart(
      "messages",
      a.days.map((d) => ({ label: d.day, value: d.messages }))
    ),
    barChart(
      "chunks",
      a.days.map((d) => ({ label: d.day, value: d.chunks }))
    ),
    el("h2", {}, `Skipped files (${a.skipped_total})`),
    a.skipped_files.length === 0
      ? el("p", {}, "None.")
      : el(
          "table",
          { class: "skipped" },
          el(
            "thead",
            {},
            el("tr", {}, el("th", {}, "file"), el("th", {}, "agent"), el("th", {}, "reason"), el("th", {}, "when"))
          ),
          el(
            "tbody",
            {},
            a.skipped_files.map((f) =>
              el(
                "tr",
                {},
                el("td", {}, el("code", {}, f.path)),
                el("td", {}, f.agent ?? ""),
                el("td", {}, f.reason),
                el("td", {}, f.at)
              )
            )
          )
        )
  )

export const renderHealth = async (root: HTMLElement): Promise<void> => {
  const body = el("div", {}, el("p", { class: "loading" }, "Loading…"))
  show(root, el("h1", {}, "Index health"), body)
  try {
    const [status, activity] = await Promise.all([
      call((c) => c.ContextStatus()),
      call((c) => c.IndexActivity({ days: DAYS }))
    ])
    show(body, statusView(status), activityView(activity), captureView(status))
  } catch (error) {
    show(body, failureView(error))
  }
}
