import { Worker } from "node:worker_threads"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import { RpcClient, type RpcClientError } from "@effect/rpc"
import { Effect, Layer, Option } from "effect"
import { Paths } from "../src/paths/paths.js"
import { HistoryReads } from "../src/retrieval/history-reads.js"
import type { InvalidQuery } from "../src/retrieval/invalid-query.js"
import { type QueryFailed, QueryRpcs } from "../src/rpc/query-protocol.js"
import { StoreError } from "../src/store/store-error.js"

/**
 * Up to this many query workers (each a worker thread with its own read-only connection). One
 * starts with the daemon; more start under concurrent reads and retire after a minute idle.
 */
export const QUERY_WORKERS = 3

/**
 * A larger young generation than the daemon's `--optimize-for-size` gives each thread: a search
 * allocates a few MiB (rows, texts, scores), and with the small default the workers spent about
 * as long in garbage collection as in SQLite.
 */
const QUERY_WORKER_LIMITS = { maxYoungGenerationSizeMb: 32 }

// programs/query-worker-main.ts, bundled by scripts/bundle.mjs as dist/programs/query-worker.js.
const entry = new URL("../programs/query-worker.js", import.meta.url)

/**
 * HistoryReads answered by a pool of worker threads, so a busy writer (or event loop) never
 * delays a read. Each call is the same call on `HistoryReadsSql` inside a worker.
 */
export const QueryWorkerPoolLive = Layer.scoped(
  HistoryReads,
  Effect.gen(function* () {
    const { database } = yield* Paths
    const context = yield* Layer.build(
      RpcClient.layerProtocolWorker({ minSize: 1, maxSize: QUERY_WORKERS, timeToLive: "60 seconds" }).pipe(
        Layer.provide(
          NodeWorker.layerPlatform(
            () => new Worker(entry, { workerData: { database }, resourceLimits: QUERY_WORKER_LIMITS })
          )
        )
      )
    ).pipe(Effect.mapError((e) => new StoreError({ path: database, message: `query workers: ${String(e)}` })))
    const client = yield* RpcClient.make(QueryRpcs).pipe(Effect.provide(context))
    /** A worker that failed or could not be reached: the read failed on the database's side. */
    const storeError = (e: QueryFailed | RpcClientError.RpcClientError) =>
      new StoreError({ path: database, message: e._tag === "QueryFailed" ? e.reason : e.message })
    const keepInvalid = (e: InvalidQuery | QueryFailed | RpcClientError.RpcClientError) =>
      e._tag === "InvalidQuery" ? e : storeError(e)
    return HistoryReads.of({
      search: (input) => client.Search(input).pipe(Effect.mapError(keepInvalid)),
      recent: (request) => client.Recent(request).pipe(Effect.mapError(keepInvalid)),
      context: (request) => client.Context(request).pipe(Effect.mapError(keepInvalid)),
      coverage: client.Coverage().pipe(Effect.mapError(storeError)),
      indexStatus: (key) => client.IndexStatus({ fingerprint_key: key }).pipe(Effect.mapError(storeError)),
      job: (id) => client.ReadJob({ job_id: id }).pipe(Effect.map(Option.fromNullable), Effect.mapError(storeError)),
      authoredUpdatesPending: (request) => client.AuthoredUpdatesPending(request).pipe(Effect.mapError(storeError)),
      captureCounts: (request) => client.CaptureCounts(request).pipe(Effect.mapError(storeError)),
      promptRecall: (input) => client.PromptRecall(input).pipe(Effect.mapError(keepInvalid)),
      exportPage: (request) => client.ExportPage(request).pipe(Effect.mapError(keepInvalid)),
      noteHistory: (request) =>
        client.NoteHistory(request).pipe(Effect.mapError((e) => (e._tag === "UnknownNote" ? e : storeError(e)))),
      listNotes: (request) => client.ListNotes(request).pipe(Effect.mapError(storeError))
    })
  })
)
