import { Schema } from "effect"

/** Every response caps the text it returns at this many characters and says when it did. */
export const RESPONSE_TEXT_BUDGET = 24_000

export const SourceType = Schema.Literal("codex_transcript", "authored_update")
export type SourceType = typeof SourceType.Type

export const QueryMode = Schema.Literal("lexical", "hybrid")
export type QueryMode = typeof QueryMode.Type

/** Whether the index is usable and complete: the daemon's judgement, reported by Ping and context_status. */
export const IndexState = Schema.Literal("ready", "indexing", "repairing", "empty", "model_missing")
export type IndexState = typeof IndexState.Type

/** Where a passage came from, exactly: `dd`/`tail -c` at these offsets shows the line. */
export class SourceLocation extends Schema.Class<SourceLocation>("SourceLocation")({
  path: Schema.String,
  line: Schema.Int,
  byte_start: Schema.Int,
  byte_end: Schema.Int
}) {}

/**
 * How a result was scored. `similarity` is cosine similarity (not confidence); `bm25` is
 * SQLite's BM25 (lower is better, as SQLite reports it); `fused` is reciprocal rank fusion,
 * comparable only within one response and never a percentage.
 */
export const ScoreKind = Schema.Literal("similarity", "bm25", "fused")
export class Score extends Schema.Class<Score>("Score")({ kind: ScoreKind, value: Schema.Number }) {}

export class SearchHit extends Schema.Class<SearchHit>("SearchHit")({
  /** Pass to `blctx context` (or the MCP `context` tool) to see the surrounding messages. */
  context_id: Schema.String,
  text: Schema.String,
  text_truncated: Schema.Boolean,
  source_type: SourceType,
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
 * Bounds on what a request may carry, sized to what a query needs: an oversized request is
 * refused by decoding, with a message saying which field and what the limit is.
 */
export const MAX_QUERY_CHARS = 4_000
export const MAX_PATH_CHARS = 4_096
export const MAX_ID_CHARS = 200
export const MAX_DATE_CHARS = 100

/** A file or directory path (a project filter, a transcript). */
export const BoundedPath = Schema.String.pipe(Schema.maxLength(MAX_PATH_CHARS))
/** An identifier: a session id, a job kind, an origin. */
export const BoundedId = Schema.String.pipe(Schema.maxLength(MAX_ID_CHARS))
/** A date or time as a person types it (`2026-01-02`, an ISO timestamp with an offset). */
export const BoundedDate = Schema.String.pipe(Schema.maxLength(MAX_DATE_CHARS))

export const SearchFilters = Schema.Struct({
  project: Schema.optional(BoundedPath),
  session: Schema.optional(BoundedId),
  since: Schema.optional(BoundedDate),
  until: Schema.optional(BoundedDate),
  source_type: Schema.optional(SourceType)
})
export type SearchFilters = typeof SearchFilters.Type

/** A search, as every caller sends it: the RPC, the query workers, the CLI and MCP share this one shape. */
export const SearchRequest = Schema.Struct({
  query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_QUERY_CHARS)),
  filters: Schema.optionalWith(SearchFilters, { default: () => ({}) }),
  limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 100)), { default: () => 10 }),
  offset: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 10_000)), { default: () => 0 })
})
export type SearchRequest = typeof SearchRequest.Type

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
  returned_chars: Schema.Int
}) {}
