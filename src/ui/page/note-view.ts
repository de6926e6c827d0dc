import type { NoteHistoryResponse, NoteRevisionEntry } from "../../notes/notes-contract.js"
import { call } from "./daemon-client.js"
import { diffView } from "./diff-view.js"
import { el, show } from "./el.js"
import { failureOf, failureView } from "./failure.js"
import { forgetRoute } from "./routes.js"

/**
 * One note: every revision, newest first, each with the diff from the one before; and an editor
 * that follows `update_note`'s rule: the change is sent with the revision the page read, and a
 * note that moved on meanwhile is refused. The refusal shows the newer text and the difference
 * from the draft; the draft stays in the editor, and is sent again only after the person has
 * chosen to base it on the newer revision.
 */

const revisionView = (entry: NoteRevisionEntry, before: NoteRevisionEntry | undefined) =>
  el(
    "li",
    { class: "revision", "data-role": "revision" },
    el(
      "header",
      {},
      el("strong", {}, `revision ${entry.revision}`),
      " ",
      el("small", {}, `${entry.created_at} · ${entry.authorship} · session ${entry.session_id}`),
      entry.tags.length === 0
        ? null
        : el(
            "span",
            { class: "tags" },
            entry.tags.map((t) => el("span", { class: "tag" }, t))
          )
    ),
    before === undefined
      ? el("pre", { class: "excerpt" }, entry.text)
      : el(
          "div",
          {},
          el("small", {}, `changes from revision ${before.revision}`),
          diffView(before.text, entry.text),
          el("details", {}, el("summary", {}, "whole text"), el("pre", { class: "excerpt" }, entry.text))
        )
  )

const historyView = (history: NoteHistoryResponse) => {
  const revisions = history.revisions
  return el(
    "ol",
    { class: "revisions" },
    [...revisions.keys()].reverse().map((i) => revisionView(revisions[i] as NoteRevisionEntry, revisions[i - 1]))
  )
}

interface Draft {
  /** The revision the page read and the draft is based on. */
  base: number
  readonly baseText: string
}

const conflictView = (error: unknown, draft: string, latest: NoteHistoryResponse | undefined, rebase: () => void) => {
  const newest = latest?.revisions.at(-1)
  return el(
    "div",
    { class: "conflict", role: "alert", "data-role": "conflict" },
    failureView(error),
    newest === undefined
      ? null
      : el(
          "div",
          {},
          el("h3", {}, `The note is now at revision ${newest.revision}:`),
          el("pre", { class: "excerpt", "data-role": "newer-text" }, newest.text),
          el("small", {}, "from the newer text to your draft"),
          diffView(newest.text, draft),
          el(
            "button",
            { type: "button", on: { click: rebase } },
            `Base my draft on revision ${newest.revision} (then save again)`
          )
        )
  )
}

const editor = (noteId: string, current: NoteRevisionEntry, onSaved: () => void) => {
  const draft: Draft = { base: current.revision, baseText: current.text }
  const area = el("textarea", { name: "text", rows: 8, value: current.text, "aria-label": "note text" })
  const status = el("div", { class: "status", "data-role": "edit-status" })
  const base = el("small", { "data-role": "edit-base" }, `editing revision ${draft.base}`)
  const save = async () => {
    const text = area.value
    show(status, "Saving…")
    try {
      const saved = await call((c) =>
        c.UpdateNote({ note_id: noteId, expected_revision: draft.base, text, authorship: "user_requested" })
      )
      show(status, `Saved as revision ${saved.revision}.`)
      onSaved()
    } catch (error) {
      if (failureOf(error).tag !== "StaleRevision") return show(status, failureView(error))
      const latest = await call((c) => c.NoteHistory({ note_id: noteId })).catch(() => undefined)
      show(
        status,
        conflictView(error, text, latest, () => {
          draft.base = latest?.current_revision ?? draft.base
          show(base, `editing revision ${draft.base} (your draft kept)`)
          show(status, "")
        })
      )
    }
  }
  return el(
    "form",
    {
      class: "editor",
      on: {
        submit: (event) => {
          event.preventDefault()
          void save()
        }
      }
    },
    el("h2", {}, "Edit"),
    base,
    area,
    el("button", { type: "submit" }, "Save"),
    status
  )
}

export const renderNote = async (root: HTMLElement, noteId: string): Promise<void> => {
  const body = el("div", {}, el("p", { class: "loading" }, "Loading…"))
  show(root, el("h1", {}, "Note ", el("code", {}, noteId)), body)
  try {
    const history = await call((c) => c.NoteHistory({ note_id: noteId }))
    const current = history.revisions.at(-1)
    show(
      body,
      el(
        "p",
        {},
        `${history.kind} · current revision ${history.current_revision} · `,
        el("a", { href: forgetRoute({ note: noteId }) }, "forget this note…")
      ),
      current === undefined ? null : editor(noteId, current, () => void renderNote(root, noteId)),
      el("h2", {}, "History"),
      historyView(history)
    )
  } catch (error) {
    show(body, failureView(error))
  }
}
