import type { SourceLocation } from "../../retrieval/contract.js"
import { el } from "./el.js"
import { type HashRoute, noteRoute, sessionRoute } from "./routes.js"

/** Where a passage came from, as one line of labelled fields (all text, sanitized by `el`). */

export interface Cited {
  readonly agent: string | null
  readonly project: string | null
  readonly session_id: string | null
  readonly timestamp: string | null
  readonly source: SourceLocation
  readonly turn_number: number
  readonly context_id: string
}

export const sourceLabel = (source: SourceLocation): string =>
  source.kind === "transcript_span"
    ? `${source.path}:${source.line}`
    : `note ${source.note_id} revision ${source.revision} of ${source.revisions}`

/** The link that opens a cited turn in its session (or a note's history). */
export const citationRoute = (c: Cited): HashRoute | undefined =>
  c.source.kind === "note_revision"
    ? noteRoute(c.source.note_id)
    : c.session_id === null
      ? undefined
      : sessionRoute(c.session_id, { turn: String(c.turn_number), at: c.context_id })

const field = (name: string, value: string | null) =>
  value === null ? null : el("span", { class: "field", "data-role": name }, el("small", {}, `${name} `), value)

export const provenanceView = (c: Cited): HTMLElement =>
  el(
    "div",
    { class: "provenance" },
    field("agent", c.agent ?? "none recorded"),
    field("project", c.project),
    field("session", c.session_id),
    field("time", c.timestamp ?? "time unknown"),
    field(c.source.kind === "transcript_span" ? "file" : "note", sourceLabel(c.source))
  )
