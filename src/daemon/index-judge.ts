import { Context, Effect, Layer, Option } from "effect"
import { EmbeddingUnavailable } from "../embedding/embedding-unavailable.js"
import type { IndexStatus } from "../retrieval/context-status.js"
import { type IndexVerdict, judgeIndex } from "../retrieval/index-state.js"
import type { DaemonStoreError } from "../rpc/errors.js"
import { QueryReads } from "../rpc/query-reads.js"
import { IndexingServices } from "../vectors/import-services.js"

/** The index judged now, with what it was judged from. */
export interface Judgement {
  readonly verdict: IndexVerdict
  readonly services: Effect.Effect.Success<IndexingServices["Type"]["current"]>
  readonly status: IndexStatus
}

type Services = Judgement["services"]

/** Judges the index: whether a model is loaded, what runs, what lacks vectors. */
export class IndexJudge extends Context.Tag("blctx/IndexJudge")<
  IndexJudge,
  {
    readonly judge: Effect.Effect<Judgement, DaemonStoreError>
    /**
     * Judges the index while `alongside` runs with the services it is judged from: a search
     * embeds its query while a reader counts what lacks vectors, instead of after.
     */
    readonly judgeAlongside: <A, E>(
      alongside: (services: Services) => Effect.Effect<A, E>
    ) => Effect.Effect<readonly [Judgement, A], DaemonStoreError | E>
  }
>() {}

export const IndexJudgeLive = Layer.effect(
  IndexJudge,
  Effect.gen(function* () {
    const reads = yield* QueryReads
    const indexing = yield* IndexingServices
    const judgeWith = (services: Services) =>
      Effect.gen(function* () {
        const unavailable = yield* indexing.unavailable
        const fingerprint = Option.map(services.embedding, (e) => e.fingerprint.key)
        const status = yield* reads.IndexStatus({ fingerprint_key: Option.getOrNull(fingerprint) })
        const verdict = judgeIndex({
          modelUnavailable: Option.isSome(services.embedding)
            ? null
            : Option.getOrElse(unavailable, () => EmbeddingUnavailable.NotInstalled({ detail: "no model is loaded" })),
          hasMessages: status.has_messages,
          chunksWithoutVector: status.chunks_without_vector,
          importActive: status.active_kinds.includes("import"),
          repairActive: status.active_kinds.includes("repair")
        })
        return { verdict, services, status } satisfies Judgement
      })
    return {
      judge: Effect.flatMap(indexing.current, judgeWith),
      judgeAlongside: (alongside) =>
        Effect.flatMap(indexing.current, (services) =>
          Effect.all([judgeWith(services), alongside(services)], { concurrency: 2 })
        )
    }
  })
)
