import { Schema } from "effect"
import { BoundedDate, MAX_QUERY_CHARS } from "../domain/bounded-text.js"
import { ResultAgent, SourceLocation, SourceType, TimeFilter } from "./contract.js"

/**
 * Prompt-time recall: the hook handler's one question to the daemon, at every prompt, under a
 * hard deadline. The daemon searches the prompt and returns only hits that clear the relevance
 * floor, judged on an absolute measure (cosine similarity of the vector match, or the share of
 * the prompt's terms a lexical match holds), never on a rank within the response.
 *
 * The hook sends this over the daemon's socket as a raw RPC frame (it loads no RPC stack), so
 * the request's encoded form is its wire form: keep it plain JSON, no transformations.
 */
export const PromptRecallRequest = Schema.Struct({
  prompt: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_QUERY_CHARS)),
  limit: Schema.Int.pipe(Schema.between(1, 10)),
  /** The relevance floor, 0..1 (config.json `prompt_recall.min_relevance`). */
  floor: Schema.Number.pipe(Schema.between(0, 1)),
  /**
   * Only history from this time on / before this time. The hook never sends them: the daemon sets
   * them from a date phrase in the prompt (`search-time-filter.ts`) before the read.
   */
  since: Schema.optional(BoundedDate),
  until: Schema.optional(BoundedDate)
})
export type PromptRecallRequest = typeof PromptRecallRequest.Type

export const PromptRecallHit = Schema.Struct({
  text: Schema.String,
  source: SourceLocation,
  /** `codex_transcript`, `claude_transcript`, `authored_update`, …: whether the excerpt is a transcript turn or a note. */
  source_type: SourceType,
  /** The agent whose history this is; for a note, the agent whose session logged it, or null. */
  agent: ResultAgent,
  session_id: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  role: Schema.String,
  /** The absolute measure the floor was applied to, 0..1. */
  relevance: Schema.Number
})
export type PromptRecallHit = typeof PromptRecallHit.Type

export const PromptRecallResponse = Schema.Struct({
  query_mode: Schema.Literal("lexical", "hybrid"),
  hits: Schema.Array(PromptRecallHit),
  /** Present when the prompt held a date phrase: what it was read as (as in a search's answer). */
  time_filter: Schema.optional(TimeFilter)
})
export type PromptRecallResponse = typeof PromptRecallResponse.Type
