import type { SqlClient, SqlError } from "@effect/sql"
import { Context, type Effect, type Option, type ParseResult, Schema } from "effect"
import { ModelFingerprint } from "../embedding/fingerprint.js"
import type { JobId, JobView } from "../jobs/job.js"
import type {
  ListNotesRequest,
  ListNotesResponse,
  NoteHistoryRequest,
  NoteHistoryResponse,
  UnknownNote
} from "../notes/notes-contract.js"
import type { StoreError } from "../store/store-error.js"
import type { CaptureCountsRequest } from "./capture-counts.js"
import type { CaptureStatus } from "./capture-status.js"
import type { ContextRequest, ContextResponse } from "./context.js"
import type { AuthoredUpdatesPendingRequest, IndexStatus } from "./context-status.js"
import { SearchRequest, type SearchResponse } from "./contract.js"
import type { Coverage } from "./coverage.js"
import type { ExportPageRequest, ExportPageResponse } from "./export-format.js"
import type { InvalidQuery } from "./invalid-query.js"
import { PromptRecallRequest, type PromptRecallResponse } from "./prompt-recall.js"
import type { RecentRequest, RecentResponse } from "./recent.js"

/**
 * Vector candidates for a hybrid search: either the query vector, for the reader to search in
 * the vector tables on its own read-only connection, or the hits the daemon got from an external store.
 */
export const VectorInput = Schema.Union(
  Schema.TaggedStruct("QueryVector", { fingerprint: ModelFingerprint, values: Schema.Array(Schema.Number) }),
  Schema.TaggedStruct("VectorHits", { hits: Schema.Array(Schema.Struct({ id: Schema.Int, score: Schema.Number })) })
)
export type VectorInput = typeof VectorInput.Type

/** A search as the daemon hands it to a reader: the request, its vector candidates, and why it is lexical. */
export const SearchInput = Schema.Struct({
  request: SearchRequest,
  vectors: Schema.NullOr(VectorInput),
  /** Reported when the answer is lexical (no vectors were given or they could not be used). */
  lexical_reason: Schema.String
})
export type SearchInput = typeof SearchInput.Type

/** A prompt-time recall as the daemon hands it to a reader: as a search, with its vector candidates. */
export const PromptRecallInput = Schema.Struct({
  request: PromptRecallRequest,
  vectors: Schema.NullOr(VectorInput),
  lexical_reason: Schema.String
})
export type PromptRecallInput = typeof PromptRecallInput.Type

/**
 * Every read of the history: one port, two layers. `HistoryReadsSql` answers on a SQL
 * connection in process (tests, and inside each query worker); the daemon's layer sends the same
 * calls to its pool of query workers, so a busy writer never delays a read.
 */
export class HistoryReads extends Context.Tag("blctx/HistoryReads")<
  HistoryReads,
  {
    readonly search: (input: SearchInput) => Effect.Effect<SearchResponse, InvalidQuery | StoreError>
    readonly recent: (request: RecentRequest) => Effect.Effect<RecentResponse, InvalidQuery | StoreError>
    readonly context: (request: ContextRequest) => Effect.Effect<ContextResponse, InvalidQuery | StoreError>
    readonly coverage: Effect.Effect<Coverage, StoreError>
    /** `fingerprintKey`: the loaded model's, to count chunks still without its vector. */
    readonly indexStatus: (fingerprintKey: string | null) => Effect.Effect<IndexStatus, StoreError>
    readonly job: (id: JobId) => Effect.Effect<Option.Option<JobView>, StoreError>
    /** Authored updates still waiting for a vector of the model the request names (`context_status`). */
    readonly authoredUpdatesPending: (request: AuthoredUpdatesPendingRequest) => Effect.Effect<number, StoreError>
    /** Capture as the database holds it, for the hook generations the request names (`context_status`). */
    readonly captureCounts: (request: CaptureCountsRequest) => Effect.Effect<CaptureStatus, StoreError>
    /** Hits for a prompt that clear its relevance floor (`PromptRecall`). */
    readonly promptRecall: (input: PromptRecallInput) => Effect.Effect<PromptRecallResponse, InvalidQuery | StoreError>
    /** One page of `blctx export` (keyset-paginated). */
    readonly exportPage: (request: ExportPageRequest) => Effect.Effect<ExportPageResponse, InvalidQuery | StoreError>
    /** Every revision of one note (`note_history`). */
    readonly noteHistory: (request: NoteHistoryRequest) => Effect.Effect<NoteHistoryResponse, UnknownNote | StoreError>
    /** Notes by their current revision (`blctx notes list`). */
    readonly listNotes: (request: ListNotesRequest) => Effect.Effect<ListNotesResponse, StoreError>
    /**
     * Any other read, a query on the reader's connection: a database failure (or a row that
     * does not decode) is a `StoreError` naming the file; the read's own refusals pass as they are.
     */
    readonly run: <A, E>(
      read: Effect.Effect<A, E, SqlClient.SqlClient>
    ) => Effect.Effect<A, Exclude<E, SqlError.SqlError | ParseResult.ParseError> | StoreError>
  }
>() {}

/** How many nearest chunks a hybrid search fuses with its BM25 candidates. */
export const VECTOR_CANDIDATES = 100
