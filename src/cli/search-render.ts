import { sanitizeDeep, sanitizeForTerminal } from "../terminal/sanitize.js"
import type { Style } from "../terminal/style.js"
import { type Segment, wrapSegments } from "../terminal/wrap.js"

/**
 * `blctx search`'s readable rendering (`--pretty`, the default at a terminal), shared by the full
 * CLI and the effect-free fast path (`fast-search.ts`): one implementation, so both print the
 * same bytes. Effect-free: it reads the answer's shape, not its schema. The whole answer first
 * passes through `sanitizeDeep`, so no field can reach the terminal with a control character in it.
 */

/** The fields of a search answer this rendering reads: the daemon's SearchResponse, decoded or encoded. */
export interface SearchAnswerView {
  readonly query: string
  readonly query_mode: string
  readonly query_mode_reason: string | null
  readonly results: ReadonlyArray<HitView>
  readonly offset: number
  readonly next_offset: number | null
  readonly truncated: boolean
  /** A date phrase the daemon read from the query (`time_filter.note` says what it did). */
  readonly time_filter?: { readonly note: string } | undefined
  /** Synonyms of the query's words the daemon also searched. */
  readonly project_named?: string | undefined
  readonly synonyms_searched?: ReadonlyArray<string> | undefined
}
export interface HitView extends WhoseView {
  readonly context_id: string
  readonly text: string
  readonly text_truncated: boolean
  readonly role: string
  readonly kind: string
  readonly project: string | null
  readonly timestamp: string | null
  readonly source: SourceView
  readonly score: { readonly kind: string; readonly value: number }
}
export type SourceView =
  | {
      readonly kind: "transcript_span"
      readonly path: string
      readonly line: number
      readonly byte_start: number
      readonly byte_end: number
    }
  | { readonly kind: "note_revision"; readonly note_id: string; readonly revision: number }
interface WhoseView {
  readonly agent: string | null
  readonly source_type: string
}

export const oneLine = (text: string, max = 400) => {
  const flat = sanitizeForTerminal(text.replace(/\s+/g, " ").trim())
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** Marks every query word in `text` (case-insensitive, whole words). */
export const highlight = (text: string, query: string, style: Style): string => {
  const words = [...new Set(query.match(/[\p{L}\p{N}_]+/gu) ?? [])].filter((w) => w.length > 1)
  if (words.length === 0) return text
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
  return text.replace(new RegExp(`\\b(${escaped.join("|")})\\b`, "giu"), (m) => style.yellow(style.bold(m)))
}

export const when = (ts: string | null) =>
  ts === null ? "unknown time" : ts.replace("T", " ").replace(/\.\d+Z$|Z$/, "Z")

/** Whose history a result is: its agent, or `note` for a note no agent is recorded for. */
export const whose = (item: WhoseView) =>
  item.source_type === "authored_update" ? (item.agent === null ? "note" : `note/${item.agent}`) : (item.agent ?? "?")

/**
 * One line naming where a passage came from, for people at the command line: `PATH:LINE bytes
 * A-B`, or the note's revision and, when older ones exist, the command that lists them (the MCP
 * answer carries the same facts as fields, and its text names its own `note_history` tool).
 */
export const describeSource = (source: SourceView): string =>
  source.kind === "transcript_span"
    ? `${source.path}:${source.line}  bytes ${source.byte_start}-${source.byte_end}`
    : `note ${source.note_id} revision ${source.revision}${source.revision > 1 ? ` (${source.revision - 1} older: blctx notes history ${source.note_id})` : ""}`

/**
 * A score as people read it. SQLite's BM25 is lower-is-better and negative, so it is shown negated,
 * as a relevance where higher is better (the JSON keeps SQLite's value); similarity is cosine
 * similarity; fused is the mean of both sides' scaled scores, comparable only within one answer.
 */
export const scoreLabel = (kind: string, value: number) =>
  kind === "similarity"
    ? `similarity ${value.toFixed(3)}`
    : kind === "bm25"
      ? `relevance ${(value === 0 ? 0 : -value).toFixed(2)} (bm25)`
      : `fused ${value.toFixed(4)}`

/** A hit's lines hang under its number; the header's continuation lines are indented. */
const HIT_HANG = "   "
const HEADER_HANG = "  "

const hitLines = (hit: HitView, n: number, query: string, style: Style, width: number | undefined) => {
  const meta: ReadonlyArray<Segment> = [
    { text: `${n}.`, style: style.bold },
    { text: ` ${when(hit.timestamp)}  ${whose(hit)}  ${hit.role}/${hit.kind}` },
    { text: `  ${hit.project ?? "no project"}`, style: style.dim },
    { text: `  ${scoreLabel(hit.score.kind, hit.score.value)}`, style: style.dim }
  ]
  const text: ReadonlyArray<Segment> = [
    { text: oneLine(hit.text), style: (word) => highlight(word, query, style) },
    ...(hit.text_truncated ? [{ text: " [truncated]", style: style.dim }] : [])
  ]
  const source: ReadonlyArray<Segment> = [
    { text: `${sanitizeForTerminal(describeSource(hit.source))}  context ${hit.context_id}`, style: style.dim }
  ]
  return [meta, text, source].flatMap((segments, i) =>
    wrapSegments(segments, { width, indent: i === 0 ? "" : HIT_HANG, hang: HIT_HANG })
  )
}

/** The search answer for people, wrapped at word boundaries to `width` columns when one is given. */
export const renderSearch = (answer: SearchAnswerView, style: Style, width?: number): string => {
  const r = sanitizeDeep(answer)
  const paragraph = (segments: ReadonlyArray<Segment>) =>
    wrapSegments(segments, { width, indent: "", hang: HEADER_HANG })
  const lines = paragraph([
    { text: `${r.results.length} results for "${oneLine(r.query)}"`, style: style.bold },
    { text: ` (${r.query_mode}${r.query_mode_reason === null ? "" : `: ${oneLine(r.query_mode_reason, 2_000)}`})` }
  ])
  if (r.time_filter !== undefined) lines.push(...paragraph([{ text: oneLine(r.time_filter.note), style: style.dim }]))
  if (r.project_named !== undefined)
    lines.push(
      ...paragraph([
        { text: `Asked about the project ${r.project_named}: its turns of that time first`, style: style.dim }
      ])
    )
  if (r.synonyms_searched !== undefined)
    lines.push(
      ...paragraph([{ text: `Also searched, as synonyms: ${r.synonyms_searched.join(", ")}`, style: style.dim }])
    )
  r.results.forEach((hit, i) => {
    lines.push(...hitLines(hit, r.offset + i + 1, r.query, style, width))
  })
  if (r.truncated)
    lines.push(...paragraph([{ text: "Text was cut at the 24,000-character response budget.", style: style.yellow }]))
  if (r.next_offset !== null) lines.push(...paragraph([{ text: `More: --offset ${r.next_offset}`, style: style.dim }]))
  return lines.join("\n")
}
