import { Worker } from "node:worker_threads"
import * as NodeWorker from "@effect/platform-node/NodeWorker"
import { RpcClient, type RpcClientError } from "@effect/rpc"
import { type Duration, Effect, Layer } from "effect"
import { Paths } from "../src/paths/paths.js"
import { daemonStoreError } from "../src/rpc/errors.js"
import { makePrimaryFirst } from "../src/rpc/primary-first.js"
import { QueryRpcs, type QueryWorkerData } from "../src/rpc/query-protocol.js"
import { QueryReads } from "../src/rpc/query-reads.js"
import { startedOnce } from "../src/rpc/started-once.js"
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

/** The reads that need the vector matrix, which only the primary worker keeps. */
const ON_PRIMARY: ReadonlySet<string> = new Set(["SearchWithVectors", "PromptRecallWithVectors"])

type Call = (payload: unknown) => Effect.Effect<unknown, unknown>

/**
 * QueryReads answered by worker threads, so a busy writer (or event loop) never delays a read.
 * Each call is the same procedure of `QueryRpcs` served in a worker. Only the primary worker keeps
 * the compact vector matrix (a quarter of the vectors' size: 37 MiB at 100k chunks of 384
 * dimensions), so every search and prompt recall goes to it; any other read goes to it when it
 * is free, else to an overflow worker. The matrix is in memory once, and an idle daemon runs one
 * worker (each costs ~35 MiB before it reads anything).
 */
export const QueryWorkerPoolLive = Layer.scoped(
  QueryReads,
  Effect.gen(function* () {
    const { database } = yield* Paths
    const scope = yield* Effect.scope
    const primary = yield* workerClient({ database, vectors: true }, { size: 1 })
    // The overflow pool starts at the first read that finds the primary busy, not with the daemon:
    // each worker parses a 1.4 MB bundle, and on a loaded two-core machine starting two took the
    // daemon's startup past 10 s. Its workers retire after a minute idle either way.
    const overflow = startedOnce(
      workerClient({ database, vectors: false }, { minSize: 0, maxSize: QUERY_WORKERS - 1, timeToLive: "60 seconds" }),
      scope
    )
    const { onPrimary, onAny } = makePrimaryFirst(
      primary as unknown as Record<string, Call>,
      overflow as unknown as Effect.Effect<Record<string, Call>, StoreError>
    )
    /** A worker that failed or could not be reached: the read failed on the database's side. */
    const unreachable = (e: RpcClientError.RpcClientError | StoreError) =>
      Effect.fail(daemonStoreError({ path: database, message: `query worker: ${e.message}` }))
    const route = (tag: string) => (payload: unknown) =>
      (ON_PRIMARY.has(tag) ? onPrimary : onAny)((worker) => worker[tag]?.(payload) ?? Effect.die(tag)).pipe(
        Effect.catchIf((e): e is RpcClientError.RpcClientError | StoreError => isClientError(e), unreachable)
      )
    // Every procedure of the group, routed alike; the types are QueryReads' by construction.
    return Object.fromEntries(
      [...QueryRpcs.requests.keys()].map((tag) => [tag, route(tag)])
    ) as unknown as QueryReads["Type"]
  })
)

/** A worker's failure to answer or to start, as opposed to the read's own typed errors. */
const isClientError = (e: unknown): boolean =>
  typeof e === "object" && e !== null && "_tag" in e && (e._tag === "RpcClientError" || e._tag === "StoreError")
