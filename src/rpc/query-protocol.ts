import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { JobId, JobView } from "../jobs/job.js"
import {
  ListNotesRequest,
  ListNotesResponse,
  NoteHistoryRequest,
  NoteHistoryResponse,
  UnknownNote
} from "../notes/notes-contract.js"
import { CaptureCountsRequest } from "../retrieval/capture-counts.js"
import { CaptureStatus } from "../retrieval/capture-status.js"
import { ContextRequest, ContextResponse } from "../retrieval/context.js"
import { AuthoredUpdatesPending, AuthoredUpdatesPendingRequest, IndexStatus } from "../retrieval/context-status.js"
import { SearchResponse } from "../retrieval/contract.js"
import { Coverage } from "../retrieval/coverage.js"
import { ExportPageRequest, ExportPageResponse } from "../retrieval/export-format.js"
import { PromptRecallInput, SearchInput } from "../retrieval/history-reads.js"
import { InvalidQuery } from "../retrieval/invalid-query.js"
import { PromptRecallResponse } from "../retrieval/prompt-recall.js"
import { RecentRequest, RecentResponse } from "../retrieval/recent.js"

/** A read failed inside a query worker (the database could not be read): a StoreError on the daemon's side. */
export class QueryFailed extends Schema.TaggedError<QueryFailed>()("QueryFailed", {
  path: Schema.String,
  reason: Schema.String
}) {}

/**
 * What the daemon asks its query workers (worker_threads, read-only connections): the
 * `HistoryReads` port carried over a worker channel, with its request and response schemas.
 */
export class QueryRpcs extends RpcGroup.make(
  Rpc.make("ReadJob", { payload: { job_id: JobId }, success: Schema.NullOr(JobView), error: QueryFailed }),
  Rpc.make("Search", {
    payload: SearchInput,
    success: SearchResponse,
    error: Schema.Union(QueryFailed, InvalidQuery)
  }),
  Rpc.make("Recent", {
    payload: RecentRequest,
    success: RecentResponse,
    error: Schema.Union(QueryFailed, InvalidQuery)
  }),
  Rpc.make("Context", {
    payload: ContextRequest,
    success: ContextResponse,
    error: Schema.Union(QueryFailed, InvalidQuery)
  }),
  Rpc.make("Coverage", { success: Coverage, error: QueryFailed }),
  Rpc.make("IndexStatus", {
    payload: { fingerprint_key: Schema.NullOr(Schema.String) },
    success: IndexStatus,
    error: QueryFailed
  }),
  Rpc.make("AuthoredUpdatesPending", {
    payload: AuthoredUpdatesPendingRequest,
    success: AuthoredUpdatesPending,
    error: QueryFailed
  }),
  Rpc.make("CaptureCounts", { payload: CaptureCountsRequest, success: CaptureStatus, error: QueryFailed }),
  Rpc.make("PromptRecall", {
    payload: PromptRecallInput,
    success: PromptRecallResponse,
    error: Schema.Union(QueryFailed, InvalidQuery)
  }),
  Rpc.make("ExportPage", {
    payload: ExportPageRequest,
    success: ExportPageResponse,
    error: Schema.Union(QueryFailed, InvalidQuery)
  }),
  Rpc.make("NoteHistory", {
    payload: NoteHistoryRequest,
    success: NoteHistoryResponse,
    error: Schema.Union(QueryFailed, UnknownNote)
  }),
  Rpc.make("ListNotes", { payload: ListNotesRequest, success: ListNotesResponse, error: QueryFailed })
) {}

/**
 * Data a query worker is started with. The daemon starts one worker with `vectors`: it keeps
 * the compact vector matrix in memory (loaded at start) and answers every search; the others
 * are never asked one, so they never load it.
 */
export const QueryWorkerData = Schema.Struct({ database: Schema.String, vectors: Schema.Boolean })
export type QueryWorkerData = typeof QueryWorkerData.Type
