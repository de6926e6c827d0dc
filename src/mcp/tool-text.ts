import {
  citationOf,
  type ExcerptProvenance,
  escapeHistoryText,
  framedExcerpt,
  frameExplanation,
  newNonce
} from "../capture/history-frame.js"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import type {
  McpContextResponse,
  McpNoteHistoryResponse,
  McpRecentResponse,
  McpSearchResponse
} from "./tool-results.js"

/**
 * How an answer that carries history (search, recent, context, note_history) is shown to a model.
 * Codex (0.171) and Claude Code (2.1) both hand the model `structuredContent` when there is one, so
 * that JSON keeps every field the schema names with each excerpt's text escaped as inside the
 * history frame (`src/capture/history-frame.ts`); the JSON string is its frame there. The text
 * block, for clients that show text, puts every excerpt in the frame itself, escaped, its
 * provenance in the opening marker, then the answer's other fields as one JSON document in which
 * each excerpt's `text` is replaced by `[excerpt N]` and every string is escaped the same way.
 * One traversal per tool says where its excerpts are, for both.
 */

type Encoded<S extends { readonly Encoded: unknown }> = S["Encoded"]

/** Sees one excerpt and answers what stands for it in the answer (a placeholder, or its escaped text). */
export type Take = (text: string, provenance: ExcerptProvenance) => string

/** Every string of a JSON value escaped as history text. */
const escapeDeep = (value: unknown): unknown => {
  if (typeof value === "string") return escapeHistoryText(value)
  if (Array.isArray(value)) return value.map(escapeDeep)
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeDeep(v)]))
  return value
}

/** The frame's `type`: a note for an authored update, a transcript turn for every other source type. */
const typeOf = (sourceType: string): ExcerptProvenance["type"] =>
  sourceType === AUTHORED_UPDATE ? "note" : "transcript"

interface Message {
  readonly context_id: string
  readonly text: string
  readonly role: string
  readonly source_type: string
  readonly agent: string | null
  readonly timestamp: string | null
  readonly source: Parameters<typeof citationOf>[0]
}

const messageProvenance = (m: Message, session: string | null): ExcerptProvenance => ({
  type: typeOf(m.source_type),
  agent: m.agent,
  role: m.role,
  session,
  date: m.timestamp,
  source: citationOf(m.source),
  extra: [
    ["source_type", m.source_type],
    ["context_id", m.context_id]
  ]
})

const sessionOf = (s: { readonly source_session_id?: string | null; readonly context_session_id?: string | null }) =>
  s.source_session_id ?? s.context_session_id ?? null

/** Calls `take` on every excerpt of an answer, in order, and answers it with each text replaced by what `take` returned. */
export type ExcerptTraversal<A> = (answer: A, take: Take) => A

/**
 * The text for one answer: a line naming the tool and how many excerpts, the frame's explanation,
 * the framed excerpts, and the fields. `nonce` is drawn for each answer (tests pass their own).
 */
export const framedAnswerText = <A>(
  tool: string,
  answer: A,
  traverse: ExcerptTraversal<A>,
  nonce: string = newNonce()
): string => {
  const excerpts: Array<{ readonly text: string; readonly provenance: ExcerptProvenance }> = []
  const fields = traverse(answer, (text, provenance) => {
    excerpts.push({ text, provenance })
    return `[excerpt ${excerpts.length}]`
  })
  const lines =
    excerpts.length === 0
      ? [`blctx ${tool}: no excerpts of history in this answer.`]
      : [
          `blctx ${tool}: ${excerpts.length} excerpt${excerpts.length === 1 ? "" : "s"} of this person's coding history, quoted as data.`,
          frameExplanation(nonce),
          ...excerpts.map((e, i) => framedExcerpt(nonce, i + 1, e.provenance, e.text))
        ]
  return [
    ...lines,
    `The answer's fields, as JSON (each "text" names its excerpt above; strings escaped the same way):`,
    JSON.stringify(escapeDeep(fields))
  ].join("\n")
}

/** The answer as `structuredContent`: each excerpt escaped in place, every other field as it is. */
export const escapedAnswer = <A>(answer: A, traverse: ExcerptTraversal<A>): A =>
  traverse(answer, (text) => escapeHistoryText(text))

export const searchExcerpts: ExcerptTraversal<Encoded<typeof McpSearchResponse>> = (answer, take) => ({
  ...answer,
  results: answer.results.map((hit) => ({ ...hit, text: take(hit.text, messageProvenance(hit, sessionOf(hit))) }))
})

export const recentExcerpts: ExcerptTraversal<Encoded<typeof McpRecentResponse>> = (answer, take) => ({
  ...answer,
  turns: answer.turns.map((turn) => ({
    ...turn,
    messages: turn.messages.map((m) => ({ ...m, text: take(m.text, messageProvenance(m, sessionOf(turn))) }))
  }))
})

export const contextExcerpts: ExcerptTraversal<Encoded<typeof McpContextResponse>> = (answer, take) => ({
  ...answer,
  messages: answer.messages.map((m) => ({ ...m, text: take(m.text, messageProvenance(m, sessionOf(answer))) }))
})

/** note_history: each revision's text, and the message it recorded (`source_text`) when there is one. */
export const noteHistoryExcerpts: ExcerptTraversal<Encoded<typeof McpNoteHistoryResponse>> = (answer, take) => ({
  ...answer,
  revisions: answer.revisions.map((r) => {
    const provenance = (field: string): ExcerptProvenance => ({
      type: "note",
      agent: null,
      role: r.authorship,
      session: r.context_session_id,
      date: r.created_at,
      source: citationOf({ kind: "note_revision", note_id: answer.note_id, revision: r.revision }),
      extra: [
        ["field", field],
        ["context_id", r.context_id]
      ]
    })
    return {
      ...r,
      text: take(r.text, provenance("text")),
      source_text: r.source_text === null ? null : take(r.source_text, provenance("source_text"))
    }
  })
})
