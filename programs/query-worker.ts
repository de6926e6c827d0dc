import { workerData } from "node:worker_threads"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import { RpcServer } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { SqliteOpenerLive } from "../layers/sqlite-opener-live.js"
import { readJob } from "../src/jobs/job-reads.js"
import { QueryFailed, QueryRpcs, QueryWorkerData } from "../src/rpc/query-protocol.js"
import { SqliteOpener } from "../src/store/sqlite-opener.js"

// A query worker (worker thread): one read-only connection, answering reads while the
// daemon's writer is busy. Started by the daemon's query pool with the database path.
const { database } = Schema.decodeUnknownSync(QueryWorkerData)(workerData)

const Handlers = QueryRpcs.toLayer(
  Effect.gen(function* () {
    const opener = yield* SqliteOpener
    const sql = yield* opener.open({ filename: database, readonly: true })
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
  Layer.provide(NodeWorkerRunner.layer),
  Layer.provide(SqliteOpenerLive)
)

NodeWorkerRunner.launch(Main).pipe(NodeRuntime.runMain)
