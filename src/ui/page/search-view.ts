import { KNOWN_SOURCE_TYPES } from "../../history/source-type.js"
import type { SearchHit, SearchResponse } from "../../retrieval/contract.js"
import { KNOWN_AGENTS } from "../../retrieval/known-agents.js"
import type { RecentResponse } from "../../retrieval/recent.js"
import { call } from "./daemon-client.js"
import { el, show } from "./el.js"
import { failureView } from "./failure.js"
import { citationRoute, provenanceView } from "./provenance.js"
import type { Params } from "./routes.js"
import { searchRoute } from "./routes.js"

/**
 * Search with the CLI's filters (agent, kind of text, project, session, since/until), each hit
 * with its provenance and a link to its turn. Without a query it is the landing view: the last
 * 20 turns (Recent), so the first screen costs one small read, never a read of everything.
 */

const FILTERS = ["agent", "source_type", "project", "session", "since", "until"] as const

const select = (name: string, label: string, options: ReadonlyArray<string>, current: string | undefined) =>
  el(
    "label",
    {},
    `${label} `,
    el(
      "select",
      { name },
      el("option", { value: "", selected: current === undefined || current === "" }, "any"),
      options.map((o) => el("option", { value: o, selected: current === o }, o))
    )
  )

const input = (name: string, label: string, current: string | undefined, placeholder = "") =>
  el("label", {}, `${label} `, el("input", { type: "text", name, value: current ?? "", placeholder }))

const formParams = (form: HTMLFormElement): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim() !== "") out[k] = v.trim()
  return out
}

export const searchForm = (params: Params): HTMLFormElement =>
  el(
    "form",
    {
      class: "search-form",
      role: "search",
      on: {
        submit: (event) => {
          event.preventDefault()
          location.hash = searchRoute(formParams(event.currentTarget as HTMLFormElement))
        }
      }
    },
    el("input", {
      type: "search",
      name: "q",
      value: params.q ?? "",
      placeholder: "Search your agents' history",
      "aria-label": "query"
    }),
    el("button", { type: "submit" }, "Search"),
    el(
      "div",
      { class: "filters" },
      select("agent", "agent", KNOWN_AGENTS, params.agent),
      select("source_type", "kind", KNOWN_SOURCE_TYPES, params.source_type),
      input("project", "project", params.project, "/path/to/project"),
      input("session", "session", params.session),
      input("since", "since", params.since, "YYYY-MM-DD"),
      input("until", "until", params.until, "YYYY-MM-DD")
    )
  )

const excerpt = (text: string, truncated: boolean) =>
  el("pre", { class: "excerpt" }, text, truncated ? el("small", { class: "cut" }, " [cut]") : null)

export const hitView = (hit: SearchHit): HTMLElement => {
  const link = citationRoute(hit)
  return el(
    "li",
    { class: "hit", "data-role": "hit" },
    el(
      "header",
      {},
      el("span", { class: "badge" }, hit.role),
      " ",
      link === undefined ? null : el("a", { href: link, class: "cite" }, "open turn"),
      " ",
      el("small", {}, `turn ${hit.turn_number}`)
    ),
    excerpt(hit.text, hit.text_truncated),
    provenanceView(hit)
  )
}

const answerView = (answer: SearchResponse, params: Params) =>
  el(
    "section",
    { class: "answer" },
    el(
      "p",
      { class: "summary" },
      `${answer.results.length} result${answer.results.length === 1 ? "" : "s"}, ${answer.query_mode}`,
      answer.query_mode_reason === null ? null : ` (${answer.query_mode_reason})`,
      answer.time_filter === undefined ? null : el("span", { class: "note" }, ` ${answer.time_filter.note}`),
      answer.project_named === undefined
        ? null
        : el(
            "span",
            { class: "note" },
            ` Asked about the project ${answer.project_named}: its turns of that time first.`
          ),
      answer.synonyms_searched === undefined
        ? null
        : el("span", { class: "note" }, ` Also searched, as synonyms: ${answer.synonyms_searched.join(", ")}.`)
    ),
    el("ol", { class: "hits" }, answer.results.map(hitView)),
    answer.next_offset === null
      ? null
      : el("a", { href: searchRoute({ ...params, offset: String(answer.next_offset) }) }, "more results")
  )

const recentView = (recent: RecentResponse) =>
  el(
    "section",
    { class: "recent" },
    el("h2", {}, "Recent turns"),
    recent.turns.length === 0 ? el("p", {}, "Nothing indexed yet.") : null,
    el(
      "ol",
      { class: "hits" },
      recent.turns.map((turn) => {
        const first = turn.messages[0]
        return el(
          "li",
          { class: "hit", "data-role": "recent-turn" },
          first === undefined
            ? null
            : el(
                "header",
                {},
                (() => {
                  const link = citationRoute({ ...turn, ...first, timestamp: turn.last_activity })
                  return link === undefined ? null : el("a", { href: link, class: "cite" }, "open turn")
                })(),
                " ",
                el("small", {}, `${turn.message_count} messages`)
              ),
          turn.messages.slice(0, 2).map((m) => excerpt(m.text.slice(0, 600), m.text_truncated || m.text.length > 600)),
          first === undefined
            ? null
            : provenanceView({
                ...first,
                project: turn.project,
                session_id: turn.session_id,
                turn_number: turn.turn_number
              })
        )
      })
    )
  )

const filtersOf = (params: Params) =>
  Object.fromEntries(FILTERS.flatMap((k) => (params[k] === undefined ? [] : [[k, params[k]]])))

export const renderSearch = async (root: HTMLElement, params: Params): Promise<void> => {
  const results = el("div", { class: "results" }, el("p", { class: "loading" }, "Loading…"))
  show(root, el("h1", {}, "Search"), searchForm(params), results)
  try {
    if (params.q === undefined || params.q === "") {
      const recent = await call((c) => c.Recent({ limit: 20 }))
      show(results, recentView(recent))
    } else {
      const offset = Number(params.offset ?? "0")
      const answer = await call((c) =>
        c.Search({
          query: params.q ?? "",
          filters: filtersOf(params),
          limit: 20,
          offset: Number.isFinite(offset) ? offset : 0
        })
      )
      show(results, answerView(answer, params))
    }
  } catch (error) {
    show(results, failureView(error))
  }
}
