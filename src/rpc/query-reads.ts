import type { RpcClient } from "@effect/rpc"
import { Context } from "effect"
import type { QueryRpc } from "./query-protocol.js"

/**
 * The daemon's reads, as a client of the query workers' group: `QueryWorkerPoolLive` sends each
 * call to a worker thread, `QueryReadsInProcess` (`query-handlers.ts`) answers it in process
 * (tests). Derived from `QueryRpcs`, so a read is declared once, in its procedure.
 */
export class QueryReads extends Context.Tag("blctx/QueryReads")<QueryReads, RpcClient.RpcClient<QueryRpc>>() {}
