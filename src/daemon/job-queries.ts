import { Context, type Effect, type Option, type Scope } from "effect"
import type { JobId, JobView } from "../jobs/job.js"
import type { StoreError } from "../store/store-error.js"

/** Reads answered on read-only connections, off the writer (a pool of query workers). */
export interface JobQueries {
  readonly job: (id: JobId) => Effect.Effect<Option.Option<JobView>, StoreError>
}

export class QueryPool extends Context.Tag("blctx/QueryPool")<
  QueryPool,
  {
    readonly open: (database: string) => Effect.Effect<JobQueries, StoreError, Scope.Scope>
  }
>() {}
