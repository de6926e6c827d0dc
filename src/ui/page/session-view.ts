import type { ContextMessage, ContextResponse } from "../../retrieval/context.js"
import { call } from "./daemon-client.js"
import { el, show } from "./el.js"
import { failureView } from "./failure.js"
import { provenanceView } from "./provenance.js"
import { forgetRoute, type Params, sessionRoute } from "./routes.js"

/**
 * One session around a cited turn (`#/session/<id>?turn=<n>&at=<context id>`): the Context read
 * from a few messages before the cited turn, so the neighbouring turns show too, with the cited
 * turn and the cited message marked. Without a context id (a link from the timeline) the first
 * turn of the session in its time range is found through Recent and shown the same way.
 */

/** Messages shown before the cited turn's first message, and in all. */
const BEFORE = 6
const WINDOW = 30

const messageView = (m: ContextMessage, citedTurn: number | undefined) =>
  el(
    "li",
    {
      class: `message${m.turn_number === citedTurn ? " cited-turn" : ""}${m.is_anchor ? " anchor" : ""}`,
      "data-turn": String(m.turn_number),
      "data-anchor": m.is_anchor ? "1" : "0",
      "data-role": m.role
    },
    el(
      "header",
      {},
      el("span", { class: "badge" }, m.role),
      " ",
      el("small", {}, `turn ${m.turn_number} · ${m.kind}`),
      m.is_anchor ? el("strong", { class: "cited-mark" }, " cited") : null
    ),
    el("pre", { class: "excerpt" }, m.text, m.text_truncated ? el("small", { class: "cut" }, " [cut]") : null),
    provenanceView({ ...m, project: null, session_id: null })
  )

/** The context id to start from: the route's, or the session's first turn in the timeline's range. */
const anchorOf = async (sessionId: string, params: Params): Promise<string | undefined> => {
  if (params.at !== undefined) return params.at
  if (params.from === undefined) return undefined
  const recent = await call((c) =>
    c.Recent({ since: params.from, ...(params.to === undefined ? {} : { until: params.to }), limit: 200 })
  )
  const turns = recent.turns.filter((t) => t.session_id === sessionId)
  const wanted = params.turn === undefined ? undefined : Number(params.turn)
  const turn = turns.find((t) => t.turn_number === wanted) ?? turns[turns.length - 1]
  return turn?.messages[0]?.context_id
}

const windowAround = async (contextId: string): Promise<ContextResponse> => {
  const first = await call((c) => c.Context({ context_id: contextId, limit: 1 }))
  const start = Math.max(0, first.offset - BEFORE)
  return call((c) => c.Context({ context_id: contextId, offset: start, limit: WINDOW }))
}

const pager = (sessionId: string, params: Params, page: ContextResponse) =>
  el(
    "nav",
    { class: "pager" },
    page.offset > 0 && page.messages[0] !== undefined
      ? el("a", { href: sessionRoute(sessionId, { at: page.messages[0].context_id }) }, "earlier")
      : null,
    " ",
    page.next_offset !== null && page.messages.at(-1) !== undefined
      ? el("a", { href: sessionRoute(sessionId, { at: page.messages.at(-1)?.context_id ?? "" }) }, "later")
      : null,
    " ",
    el("small", {}, `messages ${page.offset + 1}–${page.offset + page.messages.length} of ${page.total_messages}`),
    params.turn === undefined ? null : el("small", {}, ` · cited turn ${params.turn}`)
  )

export const renderSession = async (root: HTMLElement, sessionId: string, params: Params): Promise<void> => {
  const body = el("div", {}, el("p", { class: "loading" }, "Loading…"))
  show(
    root,
    el("h1", {}, "Session ", el("code", {}, sessionId)),
    el("p", {}, el("a", { href: forgetRoute({ session: sessionId }) }, "forget this session…")),
    body
  )
  try {
    const anchor = await anchorOf(sessionId, params)
    if (anchor === undefined) {
      show(body, el("p", {}, "Open a search result or a timeline entry to read this session's turns."))
      return
    }
    const page = await windowAround(anchor)
    const cited = params.turn === undefined ? page.messages.find((m) => m.is_anchor)?.turn_number : Number(params.turn)
    show(
      body,
      el(
        "p",
        { class: "summary" },
        page.project === null ? null : el("span", {}, "project ", el("code", {}, page.project))
      ),
      pager(sessionId, params, page),
      el(
        "ol",
        { class: "messages" },
        page.messages.map((m) => messageView(m, cited))
      ),
      pager(sessionId, params, page)
    )
    root.querySelector(".anchor")?.scrollIntoView({ block: "center" })
  } catch (error) {
    show(body, failureView(error))
  }
}
