import { RpcTest } from "@effect/rpc"
import { Effect, Layer, Option } from "effect"
import { HistoryReads } from "../retrieval/history-reads.js"
import { indexActivity } from "../retrieval/index-activity.js"
import { listSessions } from "../retrieval/sessions.js"
import { localTimeZone } from "../retrieval/time-phrases.js"
import type { StoreError } from "../store/store-error.js"
import { daemonStoreError } from "./errors.js"
import { QueryRpcs } from "./query-protocol.js"
import { QueryReads } from "./query-reads.js"

/** A read as the protocol reports it: a database failure becomes `DaemonStoreError` here, once. */
const answered = <A, E extends { readonly _tag: string }, R>(read: Effect.Effect<A, E | StoreError, R>) =>
  read.pipe(
    Effect.mapError((e) =>
      e._tag === "StoreError" ? daemonStoreError(e as StoreError) : (e as Exclude<E, StoreError>)
    )
  )

/** How a query worker answers each procedure of `QueryRpcs`: on `HistoryReads` (its read-only connection). */
export const QueryHandlersLive = QueryRpcs.toLayer(
  Effect.gen(function* () {
    const reads = yield* HistoryReads
    return {
      SearchWithVectors: (input) => answered(reads.search(input)),
      PromptRecallWithVectors: (input) => answered(reads.promptRecall(input)),
      ReadJob: ({ job_id }) => answered(Effect.map(reads.job(job_id), Option.getOrNull)),
      Coverage: () => answered(reads.coverage),
      IndexStatus: ({ fingerprint_key }) => answered(reads.indexStatus(fingerprint_key)),
      AuthoredUpdatesPending: (request) => answered(reads.authoredUpdatesPending(request)),
      CaptureCounts: (request) => answered(reads.captureCounts(request)),
      Recent: (request) => answered(reads.recent(request)),
      Context: (request) => answered(reads.context(request)),
      ExportPage: (request) => answered(reads.exportPage(request)),
      NoteHistory: (request) => answered(reads.noteHistory(request)),
      ListNotes: (request) => answered(reads.listNotes(request)),
      Sessions: (request) => answered(reads.run(listSessions(request))),
      // Days in the worker's zone, which is the daemon's (same process, same TZ).
      IndexActivity: (request) => answered(reads.run(indexActivity(request, localTimeZone())))
    }
  })
)

/** `QueryReads` answered in process by the workers' own handlers (in-process daemon tests). */
export const QueryReadsInProcess = Layer.scoped(QueryReads, RpcTest.makeClient(QueryRpcs)).pipe(
  Layer.provide(QueryHandlersLive)
)
