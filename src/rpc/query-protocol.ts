import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ModelFingerprint } from "../embedding/fingerprint.js"
import { JobId, JobView } from "../jobs/job.js"
import { ContextResponse } from "../retrieval/context.js"
import { SearchFilters, SearchResponse } from "../retrieval/contract.js"
import { Coverage } from "../retrieval/coverage.js"
import { RecentResponse } from "../retrieval/recent.js"

/** A read failed inside a query worker. */
export class QueryFailed extends Schema.TaggedError<QueryFailed>()("QueryFailed", {
  path: Schema.String,
  reason: Schema.String
}) {}

/** The request could not be answered as asked (bad date range, unknown context id). */
export class QueryRejected extends Schema.TaggedError<QueryRejected>()("QueryRejected", {
  reason: Schema.String,
  remediation: Schema.String
}) {}

/**
 * Vector candidates for a hybrid search: either the query vector, for the worker to search in
 * sqlite-vec on its own read-only connection, or the hits the daemon got from an external store.
 */
export const VectorInput = Schema.Union(
  Schema.TaggedStruct("QueryVector", { fingerprint: ModelFingerprint, values: Schema.Array(Schema.Number) }),
  Schema.TaggedStruct("VectorHits", { hits: Schema.Array(Schema.Struct({ id: Schema.Int, score: Schema.Number })) })
)
export type VectorInput = typeof VectorInput.Type

/** What decides the index state, read in one go. */
export class IndexStatus extends Schema.Class<IndexStatus>("IndexStatus")({
  messages: Schema.Int,
  chunks_without_vector: Schema.Int,
  active_kinds: Schema.Array(Schema.String),
  recent_jobs: Schema.Array(JobView)
}) {}

/** What the daemon asks its query workers (worker_threads, read-only connections). */
export class QueryRpcs extends RpcGroup.make(
  Rpc.make("ReadJob", {
    payload: { job_id: JobId },
    success: Schema.NullOr(JobView),
    error: QueryFailed
  }),
  Rpc.make("Search", {
    payload: {
      query: Schema.String,
      filters: SearchFilters,
      limit: Schema.Int,
      offset: Schema.Int,
      vectors: Schema.NullOr(VectorInput),
      lexical_reason: Schema.String
    },
    success: SearchResponse,
    error: Schema.Union(QueryFailed, QueryRejected)
  }),
  Rpc.make("Recent", {
    payload: {
      since_ms: Schema.NullOr(Schema.Number),
      until_ms: Schema.NullOr(Schema.Number),
      project: Schema.NullOr(Schema.String),
      limit: Schema.Int,
      offset: Schema.Int
    },
    success: RecentResponse,
    error: QueryFailed
  }),
  Rpc.make("Context", {
    payload: {
      context_id: Schema.String,
      offset: Schema.NullOr(Schema.Int),
      limit: Schema.Int,
      char_offset: Schema.Int
    },
    success: ContextResponse,
    error: Schema.Union(QueryFailed, QueryRejected)
  }),
  Rpc.make("Coverage", { success: Coverage, error: QueryFailed }),
  Rpc.make("IndexStatus", {
    payload: { fingerprint_key: Schema.NullOr(Schema.String) },
    success: IndexStatus,
    error: QueryFailed
  })
) {}

/** Data a query worker is started with. */
export const QueryWorkerData = Schema.Struct({ database: Schema.String })
