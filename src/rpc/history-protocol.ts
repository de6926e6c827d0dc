import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ContextRequest, ContextResponse } from "../retrieval/context.js"
import { ContextStatusResponse } from "../retrieval/context-status.js"
import { SearchRequest, SearchResponse } from "../retrieval/contract.js"
import { IndexActivityRequest, IndexActivityResponse } from "../retrieval/index-activity.js"
import { InvalidQuery } from "../retrieval/invalid-query.js"
import { PromptRecallRequest, PromptRecallResponse } from "../retrieval/prompt-recall.js"
import { RecentRequest, RecentResponse } from "../retrieval/recent.js"
import { SessionsRequest, SessionsResponse } from "../retrieval/sessions.js"
import { DaemonStoreError } from "./errors.js"
import { ExportPage } from "./export-protocol.js"
import { ListNotes, NoteHistory } from "./notes-protocol.js"

// Each read's request and response are defined once, beside the read (src/retrieval); the
// procedures below only name them, and the client, the CLI and MCP derive their types from here.

export const Search = Rpc.make("Search", {
  payload: SearchRequest,
  success: SearchResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

export const Recent = Rpc.make("Recent", {
  payload: RecentRequest,
  success: RecentResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

export const Context = Rpc.make("Context", {
  payload: ContextRequest,
  success: ContextResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

/** Sessions with their agent, project, first and last activity and turn count (`blctx sessions`). */
export const Sessions = Rpc.make("Sessions", {
  payload: SessionsRequest,
  success: SessionsResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

/** Messages, chunks and sessions per day, and the files the importer skipped (the viewer's health page). */
export const IndexActivity = Rpc.make("IndexActivity", {
  payload: IndexActivityRequest,
  success: IndexActivityResponse,
  error: DaemonStoreError
})

export const ContextStatus = Rpc.make("ContextStatus", {
  success: ContextStatusResponse,
  error: DaemonStoreError
})

/**
 * The hook's question at every prompt. Its payload and answer encode as plain JSON, since the
 * hook sends the request as a raw NDJSON frame without the RPC stack.
 */
export const PromptRecall = Rpc.make("PromptRecall", {
  payload: PromptRecallRequest,
  success: PromptRecallResponse,
  error: Schema.Union(InvalidQuery, DaemonStoreError)
})

/**
 * The reads a query worker answers whole: the daemon forwards each to a worker as it came (the
 * workers serve these same procedures, `query-protocol.ts`), and admission may refuse them as
 * busy. A new read of this kind is one line here, its handler in `query-handlers.ts`.
 */
export class ForwardedReads extends RpcGroup.make(
  Recent,
  Context,
  Sessions,
  ExportPage,
  NoteHistory,
  ListNotes,
  IndexActivity
) {}

/** History queries, served by the daemon next to its job procedures. */
export class HistoryRpcs extends RpcGroup.make(Search, ContextStatus, PromptRecall).merge(ForwardedReads) {}
