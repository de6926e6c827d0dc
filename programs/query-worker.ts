import { workerData } from "node:worker_threads"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect, Layer, Option, Schema } from "effect"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { makeSqliteVecIndex } from "../layers/sqlite-vec-index.js"
import { SafeFs } from "../src/fs/safe-fs.js"
import { readJob } from "../src/jobs/job-reads.js"
import { type ContextNotFound, expandContext } from "../src/retrieval/context.js"
import { SearchRequest } from "../src/retrieval/contract.js"
import { coverage } from "../src/retrieval/coverage.js"
import { readIndexStatus } from "../src/retrieval/index-status.js"
import { recentTurns } from "../src/retrieval/recent.js"
import { search } from "../src/retrieval/search.js"
import type { TimeRangeError } from "../src/retrieval/time-range.js"
import { IndexStatus, QueryFailed, QueryRejected, QueryRpcs, QueryWorkerData } from "../src/rpc/query-protocol.js"

// A query worker (worker thread): one read-only connection, answering reads while the
// daemon's writer is busy. Started by the daemon's query pool with the database path.
const { database } = Schema.decodeUnknownSync(QueryWorkerData)(workerData)

const Handlers = QueryRpcs.toLayer(
  Effect.gen(function* () {
    // Read-only: this connection never changes the file (nor its journal mode).
    const sql = yield* SqliteClient.make({ filename: database, readonly: true, disableWAL: true }).pipe(
      Effect.provide(Reactivity.layer)
    )
    const fs = yield* SafeFs
    // sqlite-vec searches from a read-only connection too; tables are only created by the writer.
    const vectors = yield* makeSqliteVecIndex(sql).pipe(Effect.option)
    const failed = (e: { readonly message: string }) => new QueryFailed({ path: database, reason: e.message })
    const rejected = (e: TimeRangeError | ContextNotFound) =>
      e._tag === "TimeRangeError"
        ? new QueryRejected({
            reason: `${e.input}: ${e.message}`,
            remediation: "Dates are YYYY-MM-DD or ISO 8601; no offset means UTC."
          })
        : new QueryRejected({
            reason: `no result has context id ${e.context_id}`,
            remediation: "Use a context_id from a search or recent answer."
          })
    const read = <A, E extends { readonly message: string }>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      effect.pipe(Effect.provideService(SqlClient.SqlClient, sql))
    return {
      ReadJob: ({ job_id }) => read(readJob(job_id)).pipe(Effect.map(Option.getOrNull), Effect.mapError(failed)),
      Search: (request) =>
        Effect.gen(function* () {
          const input = request.vectors
          const candidates =
            input === null
              ? Option.none()
              : input._tag === "VectorHits"
                ? Option.some({ hits: input.hits })
                : yield* Option.match(vectors, {
                    onNone: () => Effect.succeed(Option.none()),
                    onSome: (index) =>
                      index
                        .search(input.fingerprint, Float32Array.from(input.values), 100)
                        .pipe(Effect.map((hits) => Option.some({ hits })))
                  })
          const reason =
            input !== null && Option.isNone(candidates) ? "the vector index cannot be read" : request.lexical_reason
          return yield* read(
            search(
              new SearchRequest({
                query: request.query,
                filters: request.filters,
                limit: request.limit,
                offset: request.offset
              }),
              candidates,
              reason
            )
          )
        }).pipe(
          Effect.catchTag("TimeRangeError", (e) => Effect.fail(rejected(e))),
          Effect.mapError((e) => (e._tag === "QueryRejected" ? e : failed(e)))
        ),
      Recent: (request) =>
        read(
          recentTurns(
            { sinceMs: request.since_ms, untilMs: request.until_ms },
            request.project,
            request.limit,
            request.offset
          )
        ).pipe(Effect.mapError(failed)),
      Context: (request) =>
        read(
          expandContext({
            contextId: request.context_id,
            offset: request.offset ?? undefined,
            limit: request.limit,
            charOffset: request.char_offset
          })
        ).pipe(
          Effect.catchTag("ContextNotFound", (e) => Effect.fail(rejected(e))),
          Effect.mapError((e) => (e._tag === "QueryRejected" ? e : failed(e)))
        ),
      Coverage: () => read(coverage.pipe(Effect.provideService(SafeFs, fs))).pipe(Effect.mapError(failed)),
      IndexStatus: ({ fingerprint_key }) =>
        read(readIndexStatus(fingerprint_key)).pipe(
          Effect.map((s) => new IndexStatus(s)),
          Effect.mapError(failed)
        )
    }
  })
)

const Main = RpcServer.layer(QueryRpcs).pipe(
  Layer.provide(Handlers),
  Layer.provide(RpcServer.layerProtocolWorkerRunner),
  Layer.provide(NodeWorkerRunner.layer),
  Layer.provide(NodeSafeFsLive)
)

NodeWorkerRunner.launch(Main).pipe(NodeRuntime.runMain)
