import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { JobId, JobView } from "../jobs/job.js"

/** A read failed inside a query worker. */
export class QueryFailed extends Schema.TaggedError<QueryFailed>()("QueryFailed", {
  path: Schema.String,
  reason: Schema.String
}) {}

/** What the daemon asks its query workers (worker_threads, read-only connections). */
export class QueryRpcs extends RpcGroup.make(
  Rpc.make("ReadJob", {
    payload: { job_id: JobId },
    success: Schema.NullOr(JobView),
    error: QueryFailed
  })
) {}

/** Data a query worker is started with. */
export const QueryWorkerData = Schema.Struct({ database: Schema.String })
