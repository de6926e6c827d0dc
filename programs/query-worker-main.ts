import { workerData } from "node:worker_threads"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect, Either, Layer, Schema } from "effect"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { makeSqliteVectorIndex } from "../layers/sqlite-vector-index.js"
import { HistoryReadsSql } from "../src/retrieval/history-reads-sql.js"
import { lazySynonymTable } from "../src/retrieval/synonyms.js"
import { QueryHandlersLive } from "../src/rpc/query-handlers.js"
import { QueryRpcs, QueryWorkerData } from "../src/rpc/query-protocol.js"
import { keepMatrixCurrent } from "../src/vectors/matrix-catch-up.js"
import { loadPackageSynonyms } from "./package-files.js"

// A query worker (worker thread): one read-only connection, answering reads while the
// daemon's writer is busy. Started by the daemon's query pool with the database path.
const { database, vectors: keepsMatrix } = Schema.decodeUnknownSync(QueryWorkerData)(workerData)

// Read-only: this connection never changes the file (nor its journal mode).
const ConnectionLive = SqliteClient.layer({ filename: database, readonly: true, disableWAL: true })

/**
 * Read at the worker's first search (a worker may only ever answer other reads). A package
 * without the file searches each question's own words, and the daemon's log says why.
 */
const synonyms = lazySynonymTable(loadPackageSynonyms, (error) =>
  console.error(`blctx query worker: searching without synonyms: ${String(error)}`)
)

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
    return HistoryReadsSql({ database, vectors, synonyms })
  })
)

const Main = RpcServer.layer(QueryRpcs).pipe(
  Layer.provide(QueryHandlersLive),
  Layer.provide(ReadsLive),
  Layer.provide(ConnectionLive),
  Layer.provide(RpcServer.layerProtocolWorkerRunner),
  Layer.provide(NodeWorkerRunner.layer),
  Layer.provide(NodeSafeFsLive)
)

NodeWorkerRunner.launch(Main).pipe(NodeRuntime.runMain)
