import { Clock, Effect, Option } from "effect"
import { CaptureStatus } from "../retrieval/capture-status.js"
import { ContextStatusResponse } from "../retrieval/context-status.js"
import type { SearchRequest } from "../retrieval/contract.js"
import { VECTOR_CANDIDATES, type VectorInput } from "../retrieval/history-reads.js"
import type { PromptRecallRequest } from "../retrieval/prompt-recall.js"
import { applyTimePhrase, readTimePhrase, withTimeFilter } from "../retrieval/search-time-filter.js"
import { localTimeZone } from "../retrieval/time-phrases.js"
import { daemonStoreError } from "../rpc/errors.js"
import { QueryReads } from "../rpc/query-reads.js"
import { makeCaptureFacts } from "./capture-facts.js"
import { VectorPlacement } from "./daemon-indexing.js"
import { HeldFiles } from "./held-files.js"
import { IndexJudge } from "./index-judge.js"

/**
 * History queries the daemon completes. Reads run where `QueryReads` sends them (the query workers); the daemon only
 * judges the index (model, jobs, pending vectors) and embeds the query when vectors can be used,
 * so a search is hybrid exactly when every chunk has a vector of the loaded model, and lexical
 * with a reason otherwise. Prompt recall is a search of the prompt judged the same way; the
 * capture part of the status adds the spool's records (a readdir here) to what the readers count.
 */
export const makeHistoryHandlers = Effect.gen(function* () {
  const reads = yield* QueryReads
  const { judge, judgeAlongside } = yield* IndexJudge
  const { embeddedVectors } = yield* VectorPlacement
  const capture = yield* makeCaptureFacts
  const held = yield* HeldFiles

  /**
   * The query's vector candidates, or why the answer will be lexical. The query is embedded
   * while the index is judged (the judgement is a read in a query worker, the embedding runs in
   * ONNX Runtime's threads), and used only if the judgement says hybrid.
   */
  const vectorsFor = (request: { readonly query: string }) =>
    Effect.gen(function* () {
      const [{ verdict, services }, embedded] = yield* judgeAlongside((services) =>
        Option.match(services.embedding, {
          onNone: () => Effect.succeed(Option.none()),
          onSome: (model) => Effect.map(Effect.either(model.embedQuery(request.query)), Option.some)
        })
      )
      const lexical = (reason: string) => ({ vectors: null as VectorInput | null, lexical_reason: reason })
      if (verdict.query_mode !== "hybrid" || Option.isNone(services.embedding) || Option.isNone(embedded)) {
        return lexical(verdict.query_mode_reason ?? "")
      }
      const model = services.embedding.value
      if (embedded.value._tag === "Left") {
        return lexical(`the query could not be embedded: ${embedded.value.left.message}`)
      }
      const query = embedded.value.right
      if (embeddedVectors) {
        return {
          vectors: { _tag: "QueryVector", fingerprint: model.fingerprint, values: Array.from(query) } as const,
          lexical_reason: ""
        }
      }
      const hits = yield* Effect.either(model.vectors.search(model.fingerprint, query, VECTOR_CANDIDATES))
      if (hits._tag === "Left") return lexical(`the vector index did not answer: ${hits.left.message}`)
      return {
        vectors: { _tag: "VectorHits", hits: hits.right.map((h) => ({ id: h.id, score: h.score })) } as const,
        lexical_reason: ""
      }
    })

  return {
    Search: Effect.fn("History.search")(function* (asked: SearchRequest) {
      // Date phrases are read here, once for every caller, against the daemon's clock and zone:
      // it runs as the person on their machine, so its zone is theirs (decision 0020).
      const now = yield* Clock.currentTimeMillis
      const { request, filter } = applyTimePhrase(asked, now, localTimeZone())
      const candidates = yield* vectorsFor(request)
      const response = yield* reads.SearchWithVectors({ request, ...candidates })
      return withTimeFilter(response, asked.query, filter)
    }),
    PromptRecall: Effect.fn("History.promptRecall")(function* (asked: PromptRecallRequest) {
      // A prompt's date phrase bounds its recall as it bounds a search ("what did we do last week").
      const now = yield* Clock.currentTimeMillis
      const { query, bounds, filter } = readTimePhrase(asked.prompt, asked, now, localTimeZone())
      const request = { ...bounds, prompt: query }
      const candidates = yield* vectorsFor({ query })
      const answer = yield* reads.PromptRecallWithVectors({ request, ...candidates })
      return filter === undefined ? answer : { ...answer, time_filter: filter }
    }),
    ContextStatus: () =>
      Effect.gen(function* () {
        // A health answer: a database no longer at its path is not reported on, the daemon stops.
        yield* held.check.pipe(Effect.mapError((e) => daemonStoreError({ path: e.path, message: e.message })))
        const { verdict, services, status } = yield* judge
        const coverage = yield* reads.Coverage()
        const fingerprintKey = Option.getOrNull(Option.map(services.embedding, (e) => e.fingerprint.key))
        const pendingNotes = yield* reads.AuthoredUpdatesPending({ fingerprint_key: fingerprintKey })
        // The manifest names the current hook generations; unreadable, every generation counts.
        const generations = yield* Effect.orElseSucceed(capture.generations, () => null)
        const counted = yield* reads.CaptureCounts({ generations })
        const spooled = yield* capture.spoolRecords
        return new ContextStatusResponse({
          ...verdict,
          model_fingerprint: Option.getOrNull(Option.map(services.embedding, (e) => e.fingerprint.label)),
          coverage,
          recent_jobs: status.recent_jobs,
          authored_updates_pending: pendingNotes,
          capture: new CaptureStatus({ ...counted, pending: counted.pending + spooled })
        })
      })
  }
})
