import { describe, expect, it } from "@effect/vitest"
import { ansiStyle, plainStyle } from "../installer/render-text.js"
import { ListNotesResponse, NoteHistoryResponse, NoteRevisionEntry, NoteSummary } from "../notes/notes-contract.js"
import { renderNoteHistory, renderNoteShow, renderNotesList } from "./notes-render.js"

const NOTE = "9d2f1c7e-4b3a-4e5f-8a6b-7c8d9e0f1a2b"
const SESSION = "3f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10"

const revision = (n: number, text: string) =>
  new NoteRevisionEntry({
    revision: n,
    update_id: `0199a000-0000-7000-8000-00000000000${n}`,
    text,
    tags: ["billing"],
    authorship: n === 1 ? "agent_generated" : "user_requested",
    session_id: SESSION,
    created_at: `2026-02-02T09:0${n}:00.000Z`,
    source_text: null,
    context_id: `m${40 + n}`
  })

// A stored text with a terminal escape (a note can quote anything): it must never reach a terminal raw.
const hostile = "Decision: retry \u001b[31mred\u001b[0m five times."
const history = new NoteHistoryResponse({
  note_id: NOTE,
  current_revision: 2,
  kind: "decision",
  revisions: [revision(1, "Decision: retry three times."), revision(2, hostile)]
})

describe("notes rendering (--pretty)", () => {
  it("history: every revision oldest first, the current one marked, controls escaped", () => {
    const text = renderNoteHistory(history, plainStyle)
    expect(text.indexOf("revision 1")).toBeLessThan(text.indexOf("revision 2 (current)"))
    expect(text).toContain("Decision: retry three times.")
    expect(text).toContain("user_requested")
    expect(text).not.toContain("\u001b[31m")
    expect(renderNoteHistory(history, ansiStyle)).not.toContain("\u001b[31m")
  })

  it("show: the current revision and how many older ones there are", () => {
    const text = renderNoteShow(history, plainStyle)
    expect(text).toContain("2 revisions")
    expect(text).toContain("revision 2 (current)")
    expect(text).not.toContain("retry three times")
    expect(text).toContain(`1 older: blctx notes history ${NOTE}`)
  })

  it("list: one entry per note with its revision, tags and excerpt", () => {
    const list = new ListNotesResponse({
      notes: [
        new NoteSummary({
          note_id: NOTE,
          current_revision: 2,
          kind: "decision",
          tags: ["billing"],
          authorship: "user_requested",
          updated_at: "2026-02-02T09:02:00.000Z",
          created_at: "2026-02-02T09:01:00.000Z",
          session_id: SESSION,
          project: "/home/dev/billing",
          excerpt: hostile,
          excerpt_truncated: false,
          context_id: "m42"
        })
      ],
      offset: 0,
      limit: 20,
      next_offset: 20
    })
    const text = renderNotesList(list, plainStyle)
    expect(text.split("\n")[0]).toBe("1 note (newest change first)")
    const none = renderNotesList(
      new ListNotesResponse({ notes: [], offset: 0, limit: 20, next_offset: null }),
      plainStyle
    )
    expect(none.split("\n")[0]).toBe("0 notes (newest change first)")
    expect(text).toContain("revision 2  [billing]")
    expect(text).toContain(`note ${NOTE}`)
    expect(text).not.toContain("\u001b[31m")
    expect(text).toContain("More: --offset 20")
  })
})
