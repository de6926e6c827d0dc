import { DateTime, Duration, Effect, Schedule } from "effect"
import {
  canonicalSelector,
  FORGET_TOKEN_LIFETIME_MS,
  type ForgetPreviewRequest,
  ForgetPreviewResponse,
  type ForgetRequest,
  ForgetResponse
} from "../forget/forget-contract.js"
import { previewNotes } from "../forget/forget-notes.js"
import { makeForgetStore } from "../forget/forget-store.js"
import { makeTokenIssuer } from "../forget/forget-token.js"
import { daemonStoreError } from "../rpc/errors.js"
import { StoreError } from "../store/store-error.js"
import { IndexingServices } from "../vectors/import-services.js"
import { VectorPlacement } from "./daemon-indexing.js"
import { WriterDatabase } from "./writer-database.js"

/** How often the daemon looks for forgets whose scrub did not finish (a crash, a busy checkpoint). */
export const SCRUB_RETRY_INTERVAL = Duration.seconds(30)

const toProtocol = <E extends { readonly _tag: string }>(e: E | StoreError) =>
  e instanceof StoreError ? daemonStoreError(e) : (e as Exclude<E, StoreError>)

/**
 * Forgetting, on the daemon's writer connection. A preview plans and signs; a confirmation plans
 * again inside its transaction and removes only if the token signs that same plan. The token's
 * secret is this process's own, so a restart invalidates every token.
 *
 * After each forget the file is scrubbed before the answer; a forget whose scrub did not finish
 * (a kill in between, readers holding the checkpoint) is scrubbed by a fiber that looks at start
 * and then every `SCRUB_RETRY_INTERVAL`.
 */
export const makeForgetHandlers = Effect.gen(function* () {
  const writer = yield* WriterDatabase
  const indexing = yield* IndexingServices
  const placement = yield* VectorPlacement
  const store = makeForgetStore({ sql: writer.sql, database: writer.path })
  const issuer = makeTokenIssuer()

  const scrub = store.scrubPending.pipe(
    Effect.tap((done) => (done ? Effect.logInfo("database scrubbed after forgetting") : Effect.void)),
    Effect.catchAll((e) =>
      Effect.logWarning("scrub after forgetting did not finish; tried again shortly").pipe(
        Effect.annotateLogs({ reason: e.message }),
        Effect.as(false)
      )
    )
  )
  yield* scrub.pipe(Effect.repeat(Schedule.spaced(SCRUB_RETRY_INTERVAL)), Effect.forkScoped)

  return {
    ForgetPreview: (request: ForgetPreviewRequest) =>
      Effect.gen(function* () {
        const plan = yield* store.preview(request.selector)
        const now = DateTime.toEpochMillis(yield* DateTime.now)
        return new ForgetPreviewResponse({
          selector: request.selector,
          counts: plan.counts,
          items: plan.items,
          notes: previewNotes(request.selector, plan),
          token: issuer.issue(canonicalSelector(request.selector), now, plan.digest),
          expires_at: DateTime.formatIso(DateTime.unsafeMake(now + FORGET_TOKEN_LIFETIME_MS))
        })
      }).pipe(Effect.mapError(toProtocol)),
    Forget: (request: ForgetRequest) =>
      Effect.gen(function* () {
        const { embedding } = yield* indexing.current
        const vectors = { embedding, embeddedVectors: placement.embeddedVectors }
        const forgotten = yield* store.forget(request.selector, request.token, issuer, vectors)
        yield* Effect.logInfo("forgotten").pipe(
          Effect.annotateLogs({ tombstone: forgotten.tombstoneId, messages: forgotten.counts.messages })
        )
        yield* store
          .removeExternalVectors(forgotten, vectors)
          .pipe(
            Effect.catchAll((e) =>
              Effect.logWarning("forgotten vectors not removed from the vector store yet; repair prunes them").pipe(
                Effect.annotateLogs({ reason: e.message })
              )
            )
          )
        const scrubbed = yield* scrub
        return new ForgetResponse({
          selector: request.selector,
          counts: forgotten.counts,
          tombstone_id: forgotten.tombstoneId,
          forgotten_at: forgotten.forgottenAt,
          scrubbed
        })
      }).pipe(Effect.mapError(toProtocol))
  }
})
