import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Effect, Either, Layer, Option, type ParseResult } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { readJob } from "../jobs/job-reads.js"
import { listNotes, noteHistory } from "../notes/note-reads.js"
import { StoreError } from "../store/store-error.js"
import type { VectorIndexShape } from "../vectors/vector-index.js"
import { checkAgent } from "./agent-filter.js"
import { readCaptureCounts } from "./capture-counts.js"
import { expandContext } from "./context.js"
import { countAuthoredUpdatesPending, IndexStatus } from "./context-status.js"
import { coverage } from "./coverage.js"
import { readExportPage } from "./export-reads.js"
import { HistoryReads, type SearchInput, VECTOR_CANDIDATES } from "./history-reads.js"
import { readIndexStatus } from "./index-status.js"
import { invalidQuery } from "./invalid-query.js"
import { recallPrompt } from "./prompt-recall-read.js"
import { recentTurns } from "./recent.js"
import { search, type VectorCandidates } from "./search.js"
import { Synonyms, type SynonymTable } from "./synonyms.js"
import { resolveRange, TimeRangeError } from "./time-range.js"

type StoreFailure = SqlError.SqlError | ParseResult.ParseError

/** The database failed, or gave a row its schema does not accept. */
const isStoreFailure = (e: unknown): e is StoreFailure =>
  typeof e === "object" && e !== null && "_tag" in e && (e._tag === "SqlError" || e._tag === "ParseError")

export interface HistoryReadsSqlOptions {
  /** The database file, named in every StoreError. */
  readonly database: string
  /**
   * The vector index on this same connection (its vector tables), or why it could not be opened: a
   * query vector is searched here, and a search that cannot use it says why it is lexical.
   */
  readonly vectors: Either.Either<VectorIndexShape, string>
  /** The thesaurus searches widen a question with (`synonyms.ts`); without it, a question's own words. */
  readonly synonyms?: SynonymTable | undefined
}

/** Every read answered on one SQL connection (read-only is enough). */
export const makeHistoryReadsSql = (options: HistoryReadsSqlOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* SafeFs
    const storeError = (e: { readonly message: string }) =>
      new StoreError({ path: options.database, message: e.message })
    const onConnection = <A, E extends { readonly message: string }>(
      effect: Effect.Effect<A, E, SqlClient.SqlClient | SafeFs>
    ) => effect.pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(SafeFs, fs))
    /**
     * A search widens its question with the thesaurus; prompt-time recall never does: it hands
     * text to an agent unasked, so it keeps to the prompt's own words.
     */
    const widened = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      options.synonyms === undefined ? effect : Effect.provideService(effect, Synonyms, options.synonyms)

    /** The vector candidates a search fuses, or why it must be lexical. */
    const candidatesFor = (
      input: Pick<SearchInput, "vectors" | "lexical_reason">
    ): Effect.Effect<Either.Either<VectorCandidates, string>> => {
      const given = input.vectors
      if (given === null) return Effect.succeed(Either.left(input.lexical_reason))
      if (given._tag === "VectorHits") return Effect.succeed(Either.right({ hits: given.hits }))
      return Either.match(options.vectors, {
        onLeft: (why) => Effect.succeed(Either.left(`the vector index cannot be read: ${why}`)),
        onRight: (index) =>
          index.search(given.fingerprint, Float32Array.from(given.values), VECTOR_CANDIDATES).pipe(
            Effect.map((hits) => Either.right({ hits })),
            Effect.catchAll((e) => Effect.succeed(Either.left(`the vector index did not answer: ${e.message}`)))
          )
      })
    }

    return HistoryReads.of({
      search: (input) =>
        Effect.gen(function* () {
          const candidates = yield* candidatesFor(input)
          return yield* onConnection(
            widened(
              search(
                input.request,
                Either.getRight(candidates),
                Either.getLeft(candidates).pipe(Option.getOrElse(() => ""))
              )
            )
          )
        }).pipe(
          Effect.catchTags({
            TimeRangeError: (e) => Effect.fail(invalidQuery(e)),
            UnknownAgent: (e) => Effect.fail(invalidQuery(e))
          }),
          Effect.mapError((e) => (e._tag === "InvalidQuery" ? e : storeError(e)))
        ),
      recent: (request) =>
        Effect.gen(function* () {
          const nowMs = yield* Clock.currentTimeMillis
          const range = resolveRange({ days: request.days, since: request.since, until: request.until, nowMs })
          if (range instanceof TimeRangeError) return yield* invalidQuery(range)
          const agent = yield* checkAgent(request.agent).pipe(Effect.mapError(invalidQuery))
          return yield* onConnection(
            recentTurns(range, request.project ?? null, request.limit, request.offset, agent ?? null)
          ).pipe(Effect.mapError(storeError))
        }),
      context: (request) =>
        onConnection(expandContext(request)).pipe(
          Effect.catchTags({
            ContextNotFound: (e) => Effect.fail(invalidQuery(e)),
            ContextOfOtherAgent: (e) => Effect.fail(invalidQuery(e)),
            UnknownAgent: (e) => Effect.fail(invalidQuery(e))
          }),
          Effect.mapError((e) => (e._tag === "InvalidQuery" ? e : storeError(e)))
        ),
      coverage: onConnection(coverage).pipe(Effect.mapError(storeError)),
      indexStatus: (fingerprintKey) =>
        onConnection(readIndexStatus(fingerprintKey)).pipe(
          Effect.map((status) => new IndexStatus(status)),
          Effect.mapError(storeError)
        ),
      job: (id) => onConnection(readJob(id)).pipe(Effect.mapError(storeError)),
      authoredUpdatesPending: (request) =>
        onConnection(countAuthoredUpdatesPending(request)).pipe(Effect.mapError(storeError)),
      captureCounts: (request) => onConnection(readCaptureCounts(request)).pipe(Effect.mapError(storeError)),
      promptRecall: (input) =>
        Effect.gen(function* () {
          const candidates = yield* candidatesFor(input)
          return yield* onConnection(recallPrompt(input.request, Either.getRight(candidates)))
        }).pipe(
          Effect.catchTag("TimeRangeError", (e) => Effect.fail(invalidQuery(e))),
          Effect.mapError((e) => (e._tag === "InvalidQuery" ? e : storeError(e)))
        ),
      exportPage: (request) =>
        onConnection(readExportPage(request)).pipe(
          Effect.mapError((e) => (e._tag === "InvalidQuery" ? e : storeError(e)))
        ),
      noteHistory: (request) =>
        onConnection(noteHistory(request)).pipe(Effect.mapError((e) => (e._tag === "UnknownNote" ? e : storeError(e)))),
      listNotes: (request) => onConnection(listNotes(request)).pipe(Effect.mapError(storeError)),
      run: <A, E>(read: Effect.Effect<A, E, SqlClient.SqlClient>) =>
        read.pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.mapError((e) => (isStoreFailure(e) ? storeError(e as StoreFailure) : (e as Exclude<E, StoreFailure>)))
        )
    })
  })

/** HistoryReads on the SqlClient in context: in-process reads for tests, and each query worker's reads. */
export const HistoryReadsSql = (options: HistoryReadsSqlOptions) =>
  Layer.effect(HistoryReads, makeHistoryReadsSql(options))
