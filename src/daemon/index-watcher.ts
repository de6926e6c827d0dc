import { Context, Duration, Effect, Either, Layer, Option, Ref } from "effect"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import type { IndexState, QueryMode } from "../retrieval/contract.js"
import { IndexJudge } from "./index-judge.js"

/** How often the daemon re-judges its index (for Ping) and looks for vectors to repair. */
export const INDEX_WATCH_INTERVAL = Duration.seconds(2)

export interface IndexSummary {
  readonly index_state: IndexState
  readonly query_mode: QueryMode
}

/** The index state as last judged by the watcher: what Ping reports without a database read. */
export class LatestIndexSummary extends Context.Tag("blctx/LatestIndexSummary")<
  LatestIndexSummary,
  { readonly get: Effect.Effect<IndexSummary> }
>() {}

/**
 * Keeps Ping's index_state/query_mode current, and queues a repair when a verified model is
 * loaded while chunks lack its vectors (the model was installed after they were imported, or
 * changed): the embedding_model step passing is enough for pending vectors to be embedded.
 * The watch runs as a fiber for the life of the layer.
 */
export const IndexWatcherLive = Layer.scoped(
  LatestIndexSummary,
  Effect.gen(function* () {
    const { judge } = yield* IndexJudge
    const runner = yield* JobRunner
    const kinds = yield* JobKinds
    const latest = yield* Ref.make<IndexSummary>({ index_state: "empty", query_mode: "lexical" })

    const queueRepair = (pending: number) =>
      Effect.gen(function* () {
        const repair = kinds.get("repair")
        if (repair === undefined) return false
        const params = repair.validate({})
        if (Either.isLeft(params)) {
          yield* Effect.logError("repair not queued: its default params are invalid").pipe(
            Effect.annotateLogs({ reason: params.left })
          )
          return false
        }
        return yield* runner.submit(repair.name, params.right, true).pipe(
          Effect.tap(() => Effect.logInfo("repair queued").pipe(Effect.annotateLogs({ pending }))),
          Effect.as(true),
          // Logged, and tried again at the next look rather than dropped for this count.
          Effect.catchAll((e) =>
            Effect.logError("repair could not be queued").pipe(
              Effect.annotateLogs({ pending, reason: e.message }),
              Effect.as(false)
            )
          )
        )
      })

    const watch = Effect.gen(function* () {
      let repairedFor = -1
      let lastProblem = ""
      while (true) {
        const judged = yield* Effect.either(judge)
        if (Either.isRight(judged)) {
          lastProblem = ""
          const { verdict, services, status } = judged.right
          yield* Ref.set(latest, { index_state: verdict.index_state, query_mode: verdict.query_mode })
          const busy = status.active_kinds.includes("repair") || status.active_kinds.includes("import")
          const pending = status.chunks_without_vector
          // Once nothing is pending, a later pending count of the same size is new work (a note
          // whose embedding failed), not the one already repaired.
          if (pending === 0) repairedFor = -1
          if (Option.isSome(services.embedding) && pending > 0 && !busy && pending !== repairedFor) {
            if (yield* queueRepair(pending)) repairedFor = pending
          }
        } else if (judged.left.message !== lastProblem) {
          // Once per new problem, not every look.
          lastProblem = judged.left.message
          yield* Effect.logWarning("index state could not be read").pipe(Effect.annotateLogs({ reason: lastProblem }))
        }
        yield* Effect.sleep(INDEX_WATCH_INTERVAL)
      }
    })
    yield* Effect.forkScoped(watch)
    return { get: Ref.get(latest) }
  })
)
