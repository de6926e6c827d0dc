import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Layer, Option } from "effect"
import { IndexStatus } from "../retrieval/context-status.js"
import { DaemonStoreError } from "../rpc/errors.js"
import { fakeQueryReads } from "../rpc/fake-daemon.test-support.js"
import type { ImportChunking } from "../vectors/import-services.js"
import { IndexingServices } from "../vectors/import-services.js"
import { IndexJudge, IndexJudgeLive } from "./index-judge.js"

const noChunking: ImportChunking = { tokenizer: "none", chunkAll: (texts) => Effect.succeed(texts.map(() => [])) }

const indexed = new IndexStatus({ has_messages: true, chunks_without_vector: 0, active_kinds: [], recent_jobs: [] })

/** A judge whose status read runs `read` (no other read is asked). */
const judgeOver = (read: Effect.Effect<IndexStatus, DaemonStoreError>) =>
  IndexJudgeLive.pipe(
    Layer.provide(fakeQueryReads({ IndexStatus: () => read })),
    Layer.provide(
      Layer.succeed(IndexingServices, {
        current: Effect.succeed({ chunking: noChunking, embedding: Option.none() }),
        unavailable: Effect.succeed(Option.none())
      })
    )
  )

describe("IndexJudge.judgeAlongside", () => {
  it.live("runs the status read and the work beside it at the same time, and returns both", () =>
    Effect.gen(function* () {
      // Each side waits until the other has started: run one after the other, they never finish.
      const readStarted = yield* Deferred.make<void>()
      const workStarted = yield* Deferred.make<void>()
      const read = Deferred.succeed(readStarted, undefined).pipe(
        Effect.zipRight(Deferred.await(workStarted)),
        Effect.as(indexed)
      )
      const [judgement, work] = yield* Effect.flatMap(IndexJudge, (judge) =>
        judge.judgeAlongside(() =>
          Deferred.succeed(workStarted, undefined).pipe(
            Effect.zipRight(Deferred.await(readStarted)),
            Effect.as("embedded")
          )
        )
      ).pipe(
        Effect.provide(judgeOver(read)),
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the two ran one after the other") })
      )
      expect(work).toBe("embedded")
      expect(judgement.status).toEqual(indexed)
      // No model is loaded here, so the verdict is lexical whatever the work beside it did.
      expect(judgement.verdict.query_mode).toBe("lexical")
    })
  )

  it.live("a failing status read fails the judgement, and the work beside it is interrupted", () =>
    Effect.gen(function* () {
      const workInterrupted = yield* Deferred.make<void>()
      const failing = Effect.fail(
        new DaemonStoreError({ path: "/data/blctx.db", reason: "database is locked", remediation: "x" })
      )
      const exit = yield* Effect.flatMap(IndexJudge, (judge) =>
        judge.judgeAlongside(() =>
          Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(workInterrupted, undefined)))
        )
      ).pipe(Effect.provide(judgeOver(failing)), Effect.exit)
      expect(Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : exit).toMatchObject({
        _tag: "DaemonStoreError",
        reason: "database is locked"
      })
      yield* Deferred.await(workInterrupted).pipe(Effect.timeout("20 seconds"))
    })
  )
})
