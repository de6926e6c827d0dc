import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { JobId, JobView } from "../jobs/job.js"
import { CaptureCountsRequest } from "../retrieval/capture-counts.js"
import { CaptureStatus } from "../retrieval/capture-status.js"
import {
  AuthoredUpdatesPendingRequest,
  IndexStatus,
  AuthoredUpdatesPending as Pending
} from "../retrieval/context-status.js"
import { SearchResponse } from "../retrieval/contract.js"
import { Coverage } from "../retrieval/coverage.js"
import { PromptRecallInput as RecallInput, SearchInput } from "../retrieval/history-reads.js"
import { InvalidQuery } from "../retrieval/invalid-query.js"
import { PromptRecallResponse as RecallAnswer } from "../retrieval/prompt-recall.js"
import { DaemonStoreError } from "./errors.js"
import { ForwardedReads } from "./history-protocol.js"

// What only the daemon asks its query workers: reads it completes itself (a search with the
// query's vectors, the index facts it judges, a job's row). Internal, never on the socket.

const Refused = Schema.Union(InvalidQuery, DaemonStoreError)
const Failed = DaemonStoreError

/** A search or prompt recall with its vector candidates (the daemon embedded the query, or says why it is lexical). */
const Search = Rpc.make("SearchWithVectors", { payload: SearchInput, success: SearchResponse, error: Refused })
const Recall = Rpc.make("PromptRecallWithVectors", { payload: RecallInput, success: RecallAnswer, error: Refused })

/** The index facts the daemon judges and reports (`ContextStatus`, the index judge) and a job's row (`JobStatus`). */
const ReadJob = Rpc.make("ReadJob", { payload: { job_id: JobId }, success: Schema.NullOr(JobView), error: Failed })
const ReadCoverage = Rpc.make("Coverage", { success: Coverage, error: Failed })
const IndexStatusRequest = Schema.Struct({ fingerprint_key: Schema.NullOr(Schema.String) })
const ReadIndexStatus = Rpc.make("IndexStatus", { payload: IndexStatusRequest, success: IndexStatus, error: Failed })
const PendingRequest = AuthoredUpdatesPendingRequest
const ReadPending = Rpc.make("AuthoredUpdatesPending", { payload: PendingRequest, success: Pending, error: Failed })
const ReadCaptureCounts = Rpc.make("CaptureCounts", {
  payload: CaptureCountsRequest,
  success: CaptureStatus,
  error: Failed
})

/** The reads the daemon completes itself before answering (the worker side of Search, PromptRecall, ContextStatus, JobStatus). */
export class DaemonOnlyReads extends RpcGroup.make(
  Search,
  Recall,
  ReadJob,
  ReadCoverage,
  ReadIndexStatus,
  ReadPending,
  ReadCaptureCounts
) {}

/**
 * What the query workers (worker_threads, read-only connections) serve: the daemon's forwarded
 * reads, the same procedures as on the socket (declared once, in `history-protocol.ts`), and the
 * daemon-only reads above. A database failure is a `DaemonStoreError` from the worker on.
 */
export class QueryRpcs extends DaemonOnlyReads.merge(ForwardedReads) {}

/** Every procedure a query worker answers. */
export type QueryRpc = RpcGroup.Rpcs<typeof QueryRpcs>

/**
 * Data a query worker is started with. The daemon starts one worker with `vectors`: it keeps
 * the compact vector matrix in memory (loaded at start) and answers every search; the others
 * are never asked one, so they never load it.
 */
export const QueryWorkerData = Schema.Struct({ database: Schema.String, vectors: Schema.Boolean })
export type QueryWorkerData = typeof QueryWorkerData.Type
