import type { SessionSummary } from "../../retrieval/sessions.js"
import { call } from "./daemon-client.js"
import { groupBy, localDay } from "./day.js"
import { el, show } from "./el.js"
import { failureView } from "./failure.js"
import { type Params, sessionRoute, timelineRoute } from "./routes.js"

/**
 * Sessions by day and project (the Sessions read, newest first), each linking to its session.
 * The link carries the session's time range, so the session view can find its turns.
 */

const PAGE = 100

const rangeEnd = (iso: string | null) => (iso === null ? "" : new Date(new Date(iso).getTime() + 1000).toISOString())

const sessionItem = (s: SessionSummary) =>
  el(
    "li",
    { class: "session", "data-role": "session" },
    el(
      "a",
      { href: sessionRoute(s.session_id, { from: s.first_activity ?? "", to: rangeEnd(s.last_activity) }) },
      s.session_id
    ),
    " ",
    el("span", { class: "badge" }, s.agent ?? "note"),
    " ",
    el("small", {}, `${s.turns} turns, ${s.messages} messages, ${s.first_activity ?? "?"} – ${s.last_activity ?? "?"}`)
  )

const dayView = ([day, sessions]: [string, Array<SessionSummary>]) =>
  el(
    "section",
    { class: "day" },
    el("h2", {}, day),
    groupBy(sessions, (s) => s.project ?? "no project").map(([project, group]) =>
      el("div", { class: "project" }, el("h3", {}, el("code", {}, project)), el("ul", {}, group.map(sessionItem)))
    )
  )

export const renderTimeline = async (root: HTMLElement, params: Params): Promise<void> => {
  const body = el("div", {}, el("p", { class: "loading" }, "Loading…"))
  show(root, el("h1", {}, "Timeline"), body)
  try {
    const offset = Number(params.offset ?? "0")
    const answer = await call((c) => c.Sessions({ limit: PAGE, offset: Number.isFinite(offset) ? offset : 0 }))
    show(
      body,
      answer.sessions.length === 0 ? el("p", {}, "No sessions indexed yet.") : null,
      groupBy(answer.sessions, (s) => localDay(s.last_activity)).map(dayView),
      answer.next_offset === null
        ? null
        : el("a", { href: timelineRoute({ offset: String(answer.next_offset) }) }, "older sessions")
    )
  } catch (error) {
    show(body, failureView(error))
  }
}
