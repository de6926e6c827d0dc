import { Context, type Effect, type Option, type Scope } from "effect"
import type { JobId, JobView } from "../jobs/job.js"
import type { ContextResponse } from "../retrieval/context.js"
import type { SearchFilters, SearchResponse } from "../retrieval/contract.js"
import type { Coverage } from "../retrieval/coverage.js"
import type { RecentResponse } from "../retrieval/recent.js"
import type { IndexStatus, QueryRejected, VectorInput } from "../rpc/query-protocol.js"
import type { StoreError } from "../store/store-error.js"

/** Reads answered on read-only connections, off the writer (a pool of query workers). */
export interface JobQueries {
  readonly job: (id: JobId) => Effect.Effect<Option.Option<JobView>, StoreError>
  readonly search: (request: {
    readonly query: string
    readonly filters: SearchFilters
    readonly limit: number
    readonly offset: number
    readonly vectors: VectorInput | null
    readonly lexical_reason: string
  }) => Effect.Effect<SearchResponse, StoreError | QueryRejected>
  readonly recent: (request: {
    readonly since_ms: number | null
    readonly until_ms: number | null
    readonly project: string | null
    readonly limit: number
    readonly offset: number
  }) => Effect.Effect<RecentResponse, StoreError>
  readonly context: (request: {
    readonly context_id: string
    readonly offset: number | null
    readonly limit: number
    readonly char_offset: number
  }) => Effect.Effect<ContextResponse, StoreError | QueryRejected>
  readonly coverage: () => Effect.Effect<Coverage, StoreError>
  readonly indexStatus: (fingerprintKey: string | null) => Effect.Effect<IndexStatus, StoreError>
}

export class QueryPool extends Context.Tag("blctx/QueryPool")<
  QueryPool,
  {
    readonly open: (database: string) => Effect.Effect<JobQueries, StoreError, Scope.Scope>
  }
>() {}
