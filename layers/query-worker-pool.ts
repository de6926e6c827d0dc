import { Worker } from "node:worker_threads"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import { RpcClient, type RpcClientError } from "@effect/rpc"
import { type Duration, Effect, Layer, Option } from "effect"
import { Paths } from "../src/paths/paths.js"
import { HistoryReads } from "../src/retrieval/history-reads.js"
import type { InvalidQuery } from "../src/retrieval/invalid-query.js"
import { makePrimaryFirst } from "../src/rpc/primary-first.js"
import { type QueryFailed, QueryRpcs, type QueryWorkerData } from "../src/rpc/query-protocol.js"
import { StoreError } from "../src/store/store-error.js"

/**
 * Up to this many query workers (each a worker thread with its own read-only connection): the
 * primary, started with the daemon, and overflow workers that start while it is busy and
 * retire after a minute idle.
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

/** An RPC client over a pool of query workers, each started with `workerData`. */
const workerClient = (
  workerData: QueryWorkerData,
  pool:
    | { readonly size: number }
    | { readonly minSize: number; readonly maxSize: number; readonly timeToLive: Duration.DurationInput }
) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      RpcClient.layerProtocolWorker(pool).pipe(
        Layer.provide(
          NodeWorker.layerPlatform(() => new Worker(entry, { workerData, resourceLimits: QUERY_WORKER_LIMITS }))
        )
      )
    ).pipe(
      Effect.mapError((e) => new StoreError({ path: workerData.database, message: `query workers: ${String(e)}` }))
    )
    return yield* RpcClient.make(QueryRpcs).pipe(Effect.provide(context))
  })

/**
 * HistoryReads answered by worker threads, so a busy writer (or event loop) never delays a read.
 * Each call is the same call on `HistoryReadsSql` inside a worker. Only the primary worker keeps
 * the compact vector matrix (a quarter of the vectors' size: 37 MiB at 100k chunks of 384
 * dimensions), so every search and prompt recall goes to it; any other read goes to it when it
 * is free, else to an overflow worker. The matrix is in memory once, and an idle daemon runs one
 * worker (each costs ~35 MiB before it reads anything).
 */
export const QueryWorkerPoolLive = Layer.scoped(
  HistoryReads,
  Effect.gen(function* () {
    const { database } = yield* Paths
    const primary = yield* workerClient({ database, vectors: true }, { size: 1 })
    const overflow = yield* workerClient(
      { database, vectors: false },
      { minSize: 0, maxSize: QUERY_WORKERS - 1, timeToLive: "60 seconds" }
    )
    const { onPrimary, onAny } = makePrimaryFirst(primary, overflow)
    /** A worker that failed or could not be reached: the read failed on the database's side. */
    const storeError = (e: QueryFailed | RpcClientError.RpcClientError) =>
      new StoreError({ path: database, message: e._tag === "QueryFailed" ? e.reason : e.message })
    const keepInvalid = (e: InvalidQuery | QueryFailed | RpcClientError.RpcClientError) =>
      e._tag === "InvalidQuery" ? e : storeError(e)
    return HistoryReads.of({
      search: (input) => onPrimary((c) => c.Search(input)).pipe(Effect.mapError(keepInvalid)),
      recent: (request) => onAny((c) => c.Recent(request)).pipe(Effect.mapError(keepInvalid)),
      context: (request) => onAny((c) => c.Context(request)).pipe(Effect.mapError(keepInvalid)),
      coverage: onAny((c) => c.Coverage()).pipe(Effect.mapError(storeError)),
      indexStatus: (key) => onAny((c) => c.IndexStatus({ fingerprint_key: key })).pipe(Effect.mapError(storeError)),
      job: (id) =>
        onAny((c) => c.ReadJob({ job_id: id })).pipe(Effect.map(Option.fromNullable), Effect.mapError(storeError)),
      authoredUpdatesPending: (request) =>
        onAny((c) => c.AuthoredUpdatesPending(request)).pipe(Effect.mapError(storeError)),
      captureCounts: (request) => onAny((c) => c.CaptureCounts(request)).pipe(Effect.mapError(storeError)),
      promptRecall: (input) => onPrimary((c) => c.PromptRecall(input)).pipe(Effect.mapError(keepInvalid)),
      exportPage: (request) => onAny((c) => c.ExportPage(request)).pipe(Effect.mapError(keepInvalid)),
      noteHistory: (request) =>
        onAny((c) => c.NoteHistory(request)).pipe(
          Effect.mapError((e) => (e._tag === "UnknownNote" ? e : storeError(e)))
        ),
      listNotes: (request) => onAny((c) => c.ListNotes(request)).pipe(Effect.mapError(storeError))
    })
  })
)
