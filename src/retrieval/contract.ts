import { Schema } from "effect"
import { agentChoices, agentLabelChoices, transcriptSourceTypes } from "../domain/agent-choices.js"
import { BoundedDate, BoundedId, BoundedPath, MAX_QUERY_CHARS } from "../domain/bounded-text.js"
import { described } from "../domain/field-description.js"
import { rangeWords, SEARCH_BOUNDS } from "../domain/read-bounds.js"
import { boundedWithFallback } from "../domain/read-bounds-schema.js"
import { KNOWN_SOURCE_TYPES, MAX_SOURCE_TYPE_CHARS } from "../history/source-type.js"
import { AgentFilter, KNOWN_AGENTS } from "./agent-filter.js"

/** Every response caps the text it returns at this many characters and says when it did. */
export const RESPONSE_TEXT_BUDGET = 24_000

/**
 * What kind of source a result came from: an open set (`src/history/source-type.ts`). Known
 * values: `codex_transcript`, `claude_transcript`, `authored_update`; a new transcript format or
 * note kind adds one without changing this schema. As a search filter, a value no message has
 * (an unknown or misspelt type) simply matches nothing; like every request string it is bounded.
 */
export const SourceType = Schema.String.pipe(Schema.maxLength(MAX_SOURCE_TYPE_CHARS)).annotations({
  identifier: "SourceType",
  description: `What kind of source: ${KNOWN_SOURCE_TYPES.join(", ")}, or a type added later`,
  examples: [...KNOWN_SOURCE_TYPES]
})
export type SourceType = typeof SourceType.Type

export const QueryMode = Schema.Literal("lexical", "hybrid")
export type QueryMode = typeof QueryMode.Type

/** Whether the index is usable and complete: the daemon's judgement, reported by Ping and context_status. */
export const IndexState = Schema.Literal("ready", "indexing", "repairing", "empty", "model_missing")
export type IndexState = typeof IndexState.Type

/**
 * Which agent a result came from: a transcript's agent (`codex`, `claude`); for a note, the agent
 * whose hook binding opened its blctx session, or null when no agent is recorded (notes are
 * shared by every agent).
 */
export const ResultAgent = Schema.NullOr(Schema.String).annotations({
  description: `The agent whose history this is (${KNOWN_AGENTS.join(", ")}); null for a note no agent is recorded for`
})

/** Provenance in a transcript file, exactly: `dd`/`tail -c` at these offsets shows the line. */
export class TranscriptSpan extends Schema.Class<TranscriptSpan>("TranscriptSpan")({
  kind: Schema.tag("transcript_span"),
  /** The agent that wrote the transcript: `codex`, `claude`. */
  agent: Schema.String,
  path: Schema.String,
  line: Schema.Int,
  byte_start: Schema.Int,
  byte_end: Schema.Int
}) {}

/** Provenance in an authored note: the revision whose text this is. */
export class NoteRevision extends Schema.Class<NoteRevision>("NoteRevision")({
  kind: Schema.tag("note_revision"),
  note_id: Schema.String,
  /** The revision whose text this is: the current one in search and recent; `context` shows the revision its id names. */
  revision: Schema.Int,
  /** How many revisions the note has; more than 1 means older ones exist (note_history lists them). */
  revisions: Schema.Int.annotations({
    description: "How many revisions the note has; more than 1 means older revisions exist (note_history lists them)"
  })
}) {}

/**
 * Where a passage came from, told apart by `kind`: a span of a transcript file (`path`, `line`,
 * `byte_start`, `byte_end`, as before, plus `agent`) or a revision of an authored note.
 */
export const SourceLocation = Schema.Union(TranscriptSpan, NoteRevision).annotations({ identifier: "SourceLocation" })
export type SourceLocation = typeof SourceLocation.Type

/**
 * The provenance columns a reader selects: `MESSAGE_AGENT AS agent, f.path, m.line, m.byte_start,
 * m.byte_end, m.note_id, m.note_revision` with `source_files f` LEFT JOINed (a note has no source
 * file). `agent` is the message's own for a transcript, and for a note the agent its session is
 * bound to, or null (`agent-filter.ts`).
 */
export interface ProvenanceRow {
  readonly agent: string | null
  readonly path: string | null
  readonly line: number | null
  readonly byte_start: number | null
  readonly byte_end: number | null
  readonly note_id: string | null
  readonly note_revision: number | null
  /** How many revisions the note has, when a reader may return a superseded one (`NOTE_REVISIONS`). */
  readonly note_revisions?: number | null
}

/**
 * A row's provenance. The schema's CHECKs make each row exactly one kind, with all of its
 * columns set; the fallbacks below are never reached on a database migration 4 built.
 */
export const sourceLocationOf = (row: ProvenanceRow): SourceLocation =>
  row.note_id !== null
    ? // Revisions are numbered 1..n; a reader that returns only the current one need not count them.
      new NoteRevision({
        note_id: row.note_id,
        revision: row.note_revision ?? 0,
        revisions: row.note_revisions ?? row.note_revision ?? 0
      })
    : new TranscriptSpan({
        agent: row.agent ?? "",
        path: row.path ?? "",
        line: row.line ?? 0,
        byte_start: row.byte_start ?? 0,
        byte_end: row.byte_end ?? 0
      })

/**
 * How a result was scored. `similarity` is cosine similarity (not confidence); `bm25` is
 * SQLite's BM25 (lower is better, as SQLite reports it); `fused` is the mean of both
 * sides' scores scaled to [0, 1] (`convexFusion`), comparable only within one response and never
 * a percentage.
 */
export const ScoreKind = Schema.Literal("similarity", "bm25", "fused")
export class Score extends Schema.Class<Score>("Score")({
  kind: ScoreKind,
  value: Schema.Number.annotations({
    description:
      "The score as `kind` computes it: similarity is cosine similarity (higher is better); bm25 is SQLite FTS5's bm25() as words-only search reranks it (exact words and code forms, the turn's and neighbouring turns' evidence), negative, lower (more negative) is better; fused is the mean of the words-only and vector scores (the words-only score itself the mean over the question and its rephrasings when given), each scaled to 0..1 within the response (higher is better), comparable only within one response"
  })
}) {}

export class SearchHit extends Schema.Class<SearchHit>("SearchHit")({
  /** Pass to `blctx context` (or the MCP `context` tool) to see the surrounding messages. */
  context_id: Schema.String,
  text: Schema.String,
  text_truncated: Schema.Boolean,
  source_type: SourceType,
  agent: ResultAgent,
  session_id: Schema.NullOr(Schema.String),
  turn_id: Schema.NullOr(Schema.String),
  turn_number: Schema.Int,
  role: Schema.String,
  kind: Schema.String,
  project: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  source: SourceLocation,
  /** The chunk's character range in the stored message text. */
  chunk: Schema.Struct({ ordinal: Schema.Int, char_start: Schema.Int, char_end: Schema.Int }),
  score: Score
}) {}

/**
 * The fields the reads share, each with its one description: MCP's input schemas and the CLI's
 * help (`src/cli/request-options.ts`) both show it. A field named in backquotes is the argument
 * of that name (`--since` on the command line).
 */
export const ProjectField = described(
  BoundedPath,
  "Only sessions whose working directory is this directory or one below it."
)
export const SinceField = described(BoundedDate, "Only from this time on (inclusive).")
export const UntilField = described(BoundedDate, "Only before this time (exclusive).")

export const SearchFilters = Schema.Struct({
  project: Schema.optional(ProjectField),
  session: Schema.optional(
    described(BoundedId, "Only this session, by its session id (as results and explore show it).")
  ),
  since: Schema.optional(SinceField),
  until: Schema.optional(UntilField),
  source_type: Schema.optional(
    described(
      SourceType,
      `Only this kind of text: ${transcriptSourceTypes()} (messages read from your ${agentLabelChoices()} transcripts) or authored_update (notes written for blctx rather than read from a transcript).`
    )
  ),
  agent: Schema.optional(
    described(
      AgentFilter,
      `Only results of this agent: ${agentChoices({ glossed: true })}. Notes written for blctx stay unless their session belongs to another agent. Default: every agent.`
    )
  )
})
export type SearchFilters = typeof SearchFilters.Type

/** How many other wordings one search may add to its question (decision 0029). */
export const MAX_REPHRASINGS = 3
/** How long one of them may be: a short search, not a second question. */
export const MAX_REPHRASING_CHARS = 200

/**
 * Other wordings of the question from the agent that asks (decision 0029): words-only search
 * bridges no paraphrase, and the agent knows that "undo a release" is a rollback.
 */
export const RephrasingsField = described(
  Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_REPHRASING_CHARS))).pipe(
    Schema.maxItems(MAX_REPHRASINGS)
  ),
  `Up to ${MAX_REPHRASINGS} other ways to ask the same question, each a short search (at most ${MAX_REPHRASING_CHARS} characters) in the words the conversation that settled it would likely have used: the technical terms, tool, library and service names, flags, config keys and error words, where the question uses everyday words ("undo a release that went wrong" -> "rollback deployment"). Each is searched as well, within the same filters, and the results are merged; matches of the question's own words as written stay first. Leave it out when the question already uses those words.`
)

/** A search, as every caller sends it: the RPC, the query workers, the CLI and MCP share this one shape. */
export const SearchRequest = Schema.Struct({
  query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_QUERY_CHARS)),
  rephrasings: Schema.optional(RephrasingsField),
  filters: Schema.optionalWith(SearchFilters, { default: () => ({}) }),
  limit: boundedWithFallback(SEARCH_BOUNDS.limit, `How many results to return, ${rangeWords(SEARCH_BOUNDS.limit)}.`),
  offset: boundedWithFallback(
    SEARCH_BOUNDS.offset,
    "Skip this many results first, to get the next page (an answer's next_offset says where it continues)."
  )
})
export type SearchRequest = typeof SearchRequest.Type

/**
 * A date phrase the daemon found in the query (`last week`, `on Monday`): the range it read it as
 * and whether that range filtered the answer (`src/retrieval/search-time-filter.ts`).
 */
export class TimeFilter extends Schema.Class<TimeFilter>("TimeFilter")({
  /** The phrase as written in the query. */
  phrase: Schema.String,
  /** Whether the range filtered the results: false when the request gave `since` or `until` itself. */
  applied: Schema.Boolean,
  /** The range read from the phrase, ISO 8601 in UTC; null when open on that side. */
  since: Schema.NullOr(Schema.String),
  until: Schema.NullOr(Schema.String),
  /** The time zone the phrase was read in (IANA name). */
  time_zone: Schema.String,
  /** The words that were ranked: the query without the phrase when it was applied. */
  searched: Schema.String,
  /** One sentence for people and agents saying all of the above. */
  note: Schema.String
}) {}

export class SearchResponse extends Schema.Class<SearchResponse>("SearchResponse")({
  query: Schema.String,
  query_mode: QueryMode,
  /** Why the answer is lexical, when it is. */
  query_mode_reason: Schema.NullOr(Schema.String),
  results: Schema.Array(SearchHit),
  offset: Schema.Int,
  limit: Schema.Int,
  next_offset: Schema.NullOr(Schema.Int),
  /** True when the 24,000-character budget cut a text or left results out. */
  truncated: Schema.Boolean,
  returned_chars: Schema.Int,
  /** Present when the query held a date phrase: what it was read as and whether it filtered. */
  time_filter: Schema.optional(TimeFilter),
  /** Present when a question bounded in time named a project and nothing else (decision 0027). */
  project_named: Schema.optional(
    Schema.String.annotations({
      description:
        "The working directory of the project the question named, when it was bounded in time and its other words were only that project's name (\"what did we do on the billing service last week\"): that project's turns of that time come first, final answers first, then word matches from anywhere."
    })
  ),
  /** Present when the thesaurus widened the words-only search (decision 0023). */
  synonyms_searched: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description:
        "Synonyms of the query's words (WordNet's) that words-only search also searched: a result may hold one of these and none of the query's own words."
    })
  )
}) {}
