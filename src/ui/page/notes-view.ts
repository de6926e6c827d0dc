import type { NoteSummary } from "../../notes/notes-contract.js"
import { call } from "./daemon-client.js"
import { el, show } from "./el.js"
import { failureView } from "./failure.js"
import { noteRoute, notesRoute, type Params } from "./routes.js"

/** Notes by their current revision, newest change first (ListNotes), each linking to its history. */

const PAGE = 50

const noteItem = (n: NoteSummary) =>
  el(
    "li",
    { class: "note", "data-role": "note" },
    el(
      "header",
      {},
      el("a", { href: noteRoute(n.note_id) }, n.note_id),
      " ",
      el("span", { class: "badge" }, n.kind),
      " ",
      el("small", {}, `revision ${n.current_revision} · ${n.updated_at}${n.project === null ? "" : ` · ${n.project}`}`)
    ),
    el("pre", { class: "excerpt" }, n.excerpt, n.excerpt_truncated ? "…" : ""),
    n.tags.length === 0
      ? null
      : el(
          "p",
          { class: "tags" },
          n.tags.map((t) => el("span", { class: "tag" }, t))
        )
  )

export const renderNotes = async (root: HTMLElement, params: Params): Promise<void> => {
  const body = el("div", {}, el("p", { class: "loading" }, "Loading…"))
  show(root, el("h1", {}, "Notes"), body)
  try {
    const offset = Number(params.offset ?? "0")
    const answer = await call((c) => c.ListNotes({ limit: PAGE, offset: Number.isFinite(offset) ? offset : 0 }))
    show(
      body,
      answer.notes.length === 0 ? el("p", {}, "No notes yet: agents log them with log_update.") : null,
      el("ul", { class: "notes" }, answer.notes.map(noteItem)),
      answer.next_offset === null ? null : el("a", { href: notesRoute() }, "first page")
    )
  } catch (error) {
    show(body, failureView(error))
  }
}
