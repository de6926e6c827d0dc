import { Clock, Effect, Option } from "effect"
import { EmbeddingUnavailable } from "../embedding/embedding-unavailable.js"
import type { IndexingServices } from "../importer/import-services.js"
import type { SearchFilters } from "../retrieval/contract.js"
import { judgeIndex } from "../retrieval/index-state.js"
import { resolveRange, TimeRangeError } from "../retrieval/time-range.js"
import { daemonStoreError } from "../rpc/errors.js"
import { ContextStatusResponse, InvalidQuery } from "../rpc/history-protocol.js"
import type { QueryRejected, VectorInput } from "../rpc/query-protocol.js"
import type { StoreError } from "../store/store-error.js"
import type { JobQueries } from "./job-queries.js"

/** How many nearest chunks a hybrid search fuses with its BM25 candidates. */
const VECTOR_CANDIDATES = 100

const rejected = (e: StoreError | QueryRejected) =>
  e._tag === "QueryRejected" ? new InvalidQuery({ reason: e.reason, remediation: e.remediation }) : daemonStoreError(e)

/**
 * History queries. Reads run in the query workers; the daemon only judges the index (model,
 * jobs, pending vectors) and embeds the query when vectors can be used, so a search is hybrid
 * exactly when every chunk has a vector of the loaded model, and lexical with a reason otherwise.
 */
export const makeHistoryHandlers = (deps: {
  readonly queries: JobQueries
  readonly indexing: IndexingServices["Type"]
  /** True when vectors live in this daemon's SQLite file (the workers search them there). */
  readonly embeddedVectors: boolean
}) => {
  const { queries, indexing } = deps

  /** The index state now: whether a model is loaded, what runs, what lacks vectors. */
  const judge = Effect.gen(function* () {
    const services = yield* indexing.current
    const unavailable = yield* indexing.unavailable
    const fingerprint = Option.map(services.embedding, (e) => e.fingerprint.key)
    const status = yield* queries.indexStatus(Option.getOrNull(fingerprint))
    const verdict = judgeIndex({
      modelUnavailable: Option.isSome(services.embedding)
        ? null
        : Option.getOrElse(unavailable, () => EmbeddingUnavailable.NotInstalled({ detail: "no model is loaded" })),
      messages: status.messages,
      chunksWithoutVector: status.chunks_without_vector,
      importActive: status.active_kinds.includes("import"),
      repairActive: status.active_kinds.includes("repair")
    })
    return { verdict, services, status }
  })

  const handlers = {
    Search: (request: {
      readonly query: string
      readonly filters: SearchFilters
      readonly limit: number
      readonly offset: number
    }) =>
      Effect.gen(function* () {
        const { verdict, services } = yield* judge
        let vectors: VectorInput | null = null
        let reason = verdict.query_mode_reason ?? ""
        if (verdict.query_mode === "hybrid" && Option.isSome(services.embedding)) {
          const model = services.embedding.value
          const embedded = yield* Effect.either(model.embedQuery(request.query))
          if (embedded._tag === "Left") reason = `the query could not be embedded: ${embedded.left.message}`
          else if (deps.embeddedVectors) {
            vectors = { _tag: "QueryVector", fingerprint: model.fingerprint, values: Array.from(embedded.right) }
          } else {
            const hits = yield* Effect.either(
              model.vectors.search(model.fingerprint, embedded.right, VECTOR_CANDIDATES)
            )
            if (hits._tag === "Left") reason = `the vector index did not answer: ${hits.left.message}`
            else vectors = { _tag: "VectorHits", hits: hits.right.map((h) => ({ id: h.id, score: h.score })) }
          }
        }
        return yield* queries.search({ ...request, vectors, lexical_reason: reason }).pipe(Effect.mapError(rejected))
      }).pipe(Effect.catchTag("StoreError", (e) => Effect.fail(daemonStoreError(e)))),

    Recent: (request: {
      readonly days?: number | undefined
      readonly since?: string | undefined
      readonly until?: string | undefined
      readonly project?: string | undefined
      readonly limit: number
      readonly offset: number
    }) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const range = resolveRange({ days: request.days, since: request.since, until: request.until, nowMs })
        if (range instanceof TimeRangeError) {
          return yield* new InvalidQuery({
            reason: `${range.input}: ${range.message}`,
            remediation: "Dates are YYYY-MM-DD or ISO 8601 date-times; without an offset they mean UTC."
          })
        }
        return yield* queries
          .recent({
            since_ms: range.sinceMs,
            until_ms: range.untilMs,
            project: request.project ?? null,
            limit: request.limit,
            offset: request.offset
          })
          .pipe(Effect.mapError(daemonStoreError))
      }),

    Context: (request: {
      readonly context_id: string
      readonly offset?: number | undefined
      readonly limit: number
      readonly char_offset: number
    }) =>
      queries
        .context({
          context_id: request.context_id,
          offset: request.offset ?? null,
          limit: request.limit,
          char_offset: request.char_offset
        })
        .pipe(Effect.mapError(rejected)),

    ContextStatus: () =>
      Effect.gen(function* () {
        const { verdict, services, status } = yield* judge
        const coverage = yield* queries.coverage()
        return new ContextStatusResponse({
          ...verdict,
          model_fingerprint: Option.getOrNull(Option.map(services.embedding, (e) => e.fingerprint.label)),
          coverage,
          recent_jobs: status.recent_jobs
        })
      }).pipe(Effect.mapError(daemonStoreError))
  }
  return { judge, handlers }
}
