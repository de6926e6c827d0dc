import { workerData } from "node:worker_threads"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { makeSqliteVectorIndex } from "../layers/sqlite-vector-index.js"
import { HistoryReads } from "../src/retrieval/history-reads.js"
import { HistoryReadsSql } from "../src/retrieval/history-reads-sql.js"
import { QueryFailed, QueryRpcs, QueryWorkerData } from "../src/rpc/query-protocol.js"
import type { StoreError } from "../src/store/store-error.js"
import { keepMatrixCurrent } from "../src/vectors/matrix-catch-up.js"

// A query worker (worker thread): one read-only connection, answering reads while the
// daemon's writer is busy. Started by the daemon's query pool with the database path.
const { database, vectors: keepsMatrix } = Schema.decodeUnknownSync(QueryWorkerData)(workerData)

// Read-only: this connection never changes the file (nor its journal mode).
const ConnectionLive = SqliteClient.layer({ filename: database, readonly: true, disableWAL: true })

// The vector tables are searched from a read-only connection too (tables are only created by the writer);
// when it cannot load, the reason is kept and every hybrid search says it.
const ReadsLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const sql = yield* SqliteClient.SqliteClient
    const opened = yield* Effect.either(makeSqliteVectorIndex(sql))
    // The worker that keeps the matrix loads it in the background, then keeps it up to date
    // with what the writer adds (a few thousand rows at most each time while an import runs).
    // A search that comes meanwhile waits for it on this thread. The other workers never
    // search, so never load it.
    if (keepsMatrix && Either.isRight(opened)) yield* keepMatrixCurrent(opened.right.warm)
    const vectors = opened.pipe(Either.mapLeft((e) => e.message))
    return HistoryReadsSql({ database, vectors })
  })
)

const failed = (e: StoreError) => new QueryFailed({ path: e.path, reason: e.message })

const Handlers = QueryRpcs.toLayer(
  Effect.gen(function* () {
    const reads = yield* HistoryReads
    return {
      ReadJob: ({ job_id }) => reads.job(job_id).pipe(Effect.map(Option.getOrNull), Effect.mapError(failed)),
      Search: (input) => reads.search(input).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? failed(e) : e))),
      Recent: (request) =>
        reads.recent(request).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? failed(e) : e))),
      Context: (request) =>
        reads.context(request).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? failed(e) : e))),
      Coverage: () => reads.coverage.pipe(Effect.mapError(failed)),
      IndexStatus: ({ fingerprint_key }) => reads.indexStatus(fingerprint_key).pipe(Effect.mapError(failed)),
      AuthoredUpdatesPending: (request) => reads.authoredUpdatesPending(request).pipe(Effect.mapError(failed)),
      CaptureCounts: (request) => reads.captureCounts(request).pipe(Effect.mapError(failed)),
      PromptRecall: (input) =>
        reads.promptRecall(input).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? failed(e) : e))),
      ExportPage: (request) =>
        reads.exportPage(request).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? failed(e) : e))),
      NoteHistory: (request) =>
        reads.noteHistory(request).pipe(Effect.mapError((e) => (e._tag === "StoreError" ? failed(e) : e))),
      ListNotes: (request) => reads.listNotes(request).pipe(Effect.mapError(failed))
    }
  })
)

const Main = RpcServer.layer(QueryRpcs).pipe(
  Layer.provide(Handlers),
  Layer.provide(ReadsLive),
  Layer.provide(ConnectionLive),
  Layer.provide(RpcServer.layerProtocolWorkerRunner),
  Layer.provide(NodeWorkerRunner.layer),
  Layer.provide(NodeSafeFsLive)
)

NodeWorkerRunner.launch(Main).pipe(NodeRuntime.runMain)
