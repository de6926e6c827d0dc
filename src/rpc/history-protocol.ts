import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { JobView } from "../jobs/job.js"
import { ContextResponse } from "../retrieval/context.js"
import {
  BoundedDate,
  BoundedPath,
  MAX_QUERY_CHARS,
  QueryMode,
  SearchFilters,
  SearchResponse
} from "../retrieval/contract.js"
import { Coverage } from "../retrieval/coverage.js"
import { RecentResponse } from "../retrieval/recent.js"
import { DaemonStoreError } from "./errors.js"

/** A query the daemon cannot run as asked (a bad date, an empty query, an unknown context id). */
export class InvalidQuery extends Schema.TaggedError<InvalidQuery>()("InvalidQuery", {
  reason: Schema.String,
  remediation: Schema.String
}) {
  override get message() {
    return `${this.reason}. ${this.remediation}`
  }
}

export const IndexState = Schema.Literal("ready", "indexing", "repairing", "empty", "model_missing")
export type IndexState = typeof IndexState.Type

export const Search = Rpc.make("Search", {
  payload: Schema.Struct({
    query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_QUERY_CHARS)),
    filters: Schema.optionalWith(SearchFilters, { default: () => ({}) }),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 100)), { default: () => 10 }),
    offset: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 10_000)), { default: () => 0 })
  }),
  success: SearchResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

export const Recent = Rpc.make("Recent", {
  payload: Schema.Struct({
    days: Schema.optional(Schema.Number.pipe(Schema.positive(), Schema.lessThanOrEqualTo(36_500))),
    since: Schema.optional(BoundedDate),
    until: Schema.optional(BoundedDate),
    project: Schema.optional(BoundedPath),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 200)), { default: () => 20 }),
    offset: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 0 })
  }),
  success: RecentResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

export const Context = Rpc.make("Context", {
  payload: Schema.Struct({
    context_id: Schema.String.pipe(Schema.maxLength(40)),
    offset: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
    limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 200)), { default: () => 20 }),
    char_offset: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { default: () => 0 })
  }),
  success: ContextResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

/** What the index covers and whether search can use vectors: `blctx index-status`, MCP `context_status`. */
export class ContextStatusResponse extends Schema.Class<ContextStatusResponse>("ContextStatusResponse")({
  index_state: IndexState,
  query_mode: QueryMode,
  query_mode_reason: Schema.NullOr(Schema.String),
  model_fingerprint: Schema.NullOr(Schema.String),
  coverage: Coverage,
  recent_jobs: Schema.Array(JobView)
}) {}

export const ContextStatus = Rpc.make("ContextStatus", {
  success: ContextStatusResponse,
  error: DaemonStoreError
})

/** History queries, served by the daemon next to its job procedures. */
export class HistoryRpcs extends RpcGroup.make(Search, Recent, Context, ContextStatus) {}
