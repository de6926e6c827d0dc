import { Worker } from "node:worker_threads"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import { RpcClient, type RpcClientError } from "@effect/rpc"
import { Effect, Layer, Option } from "effect"
import { type JobQueries, QueryPool } from "../src/daemon/job-queries.js"
import type { JobId } from "../src/jobs/job.js"
import { type QueryFailed, type QueryRejected, QueryRpcs } from "../src/rpc/query-protocol.js"
import { StoreError } from "../src/store/store-error.js"

/**
 * Up to this many query workers (each a worker thread with its own read-only connection). One
 * starts with the daemon; more start under concurrent reads and retire after a minute idle.
 */
export const QUERY_WORKERS = 3

const entry = new URL("../programs/query-worker.js", import.meta.url)

/** Reads run in a pool of worker threads, so a busy writer (or event loop) never delays them. */
export const QueryWorkerPoolLive = Layer.succeed(QueryPool, {
  open: (database) =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        RpcClient.layerProtocolWorker({ minSize: 1, maxSize: QUERY_WORKERS, timeToLive: "60 seconds" }).pipe(
          Layer.provide(NodeWorker.layerPlatform(() => new Worker(entry, { workerData: { database } })))
        )
      )
      const client = yield* RpcClient.make(QueryRpcs).pipe(Effect.provide(context))
      const storeError = (e: { readonly message: string }) => new StoreError({ path: database, message: e.message })
      const keepRejection = (e: QueryFailed | QueryRejected | RpcClientError.RpcClientError) =>
        e._tag === "QueryRejected" ? e : storeError(e)
      const queries: JobQueries = {
        job: (id: JobId) =>
          client.ReadJob({ job_id: id }).pipe(Effect.map(Option.fromNullable), Effect.mapError(storeError)),
        search: (request) => client.Search(request).pipe(Effect.mapError(keepRejection)),
        recent: (request) => client.Recent(request).pipe(Effect.mapError(storeError)),
        context: (request) => client.Context(request).pipe(Effect.mapError(keepRejection)),
        coverage: () => client.Coverage().pipe(Effect.mapError(storeError)),
        indexStatus: (key) => client.IndexStatus({ fingerprint_key: key }).pipe(Effect.mapError(storeError))
      }
      return queries
    }).pipe(
      Effect.mapError((e) => (e instanceof StoreError ? e : new StoreError({ path: database, message: String(e) })))
    )
})
