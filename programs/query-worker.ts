import { workerData } from "node:worker_threads"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as RpcServer from "@effect/rpc/RpcServer"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect, Layer, Option, Schema } from "effect"
import { readJob } from "../src/jobs/job-reads.js"
import { QueryFailed, QueryRpcs, QueryWorkerData } from "../src/rpc/query-protocol.js"

// A query worker (worker thread): one read-only connection, answering reads while the
// daemon's writer is busy. Started by the daemon's query pool with the database path.
const { database } = Schema.decodeUnknownSync(QueryWorkerData)(workerData)

const Handlers = QueryRpcs.toLayer(
  Effect.gen(function* () {
    // Read-only: this connection never changes the file (nor its journal mode).
    const sql = yield* SqliteClient.make({ filename: database, readonly: true, disableWAL: true }).pipe(
      Effect.provide(Reactivity.layer)
    )
    const failed = (e: { readonly message: string }) => new QueryFailed({ path: database, reason: e.message })
    return {
      ReadJob: ({ job_id }) =>
        readJob(job_id).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.map(Option.getOrNull),
          Effect.mapError(failed)
        )
    }
  })
)

const Main = RpcServer.layer(QueryRpcs).pipe(
  Layer.provide(Handlers),
  Layer.provide(RpcServer.layerProtocolWorkerRunner),
  Layer.provide(NodeWorkerRunner.layer)
)

NodeWorkerRunner.launch(Main).pipe(NodeRuntime.runMain)
