import { Cause, Effect, Exit, Fiber, Option, Queue, Ref } from "effect"
import type { JobId, JobRow } from "./job.js"
import { JobKinds } from "./job-kinds.js"
import { type CancelSelector, JobStore } from "./job-store.js"

/**
 * The single writer: one fiber takes jobs from the durable queue and runs them one at a time.
 * Interrupted jobs (`running` rows left by a crash or a shutdown) are picked up again first,
 * resuming from their last committed checkpoint.
 */
export class JobRunner extends Effect.Service<JobRunner>()("blctx/JobRunner", {
  scoped: Effect.gen(function* () {
    const store = yield* JobStore
    const kinds = yield* JobKinds
    const wake = yield* Queue.sliding<void>(1)
    const current = yield* Ref.make(
      Option.none<{ readonly id: JobId; readonly fiber: Fiber.RuntimeFiber<unknown, unknown> }>()
    )

    const runOne = (row: JobRow) =>
      Effect.gen(function* () {
        if (!(yield* store.start(row.id))) return
        const kind = kinds.get(row.kind)
        if (kind === undefined) {
          yield* Effect.logError("job kind unknown to this daemon").pipe(
            Effect.annotateLogs({ job: row.id, kind: row.kind })
          )
          return yield* store.finish(row.id, "failed", { error: `unknown job kind ${row.kind}` })
        }
        yield* Effect.logInfo("job started").pipe(
          Effect.annotateLogs({ job: row.id, kind: row.kind, resumed: row.checkpoint !== null })
        )
        const fiber = yield* Effect.fork(
          kind.run(row.params, Option.fromNullable(row.checkpoint), {
            jobId: row.id,
            commit: (work, next) => store.commitStep(row.id, work, next)
          })
        )
        yield* Ref.set(current, Option.some({ id: row.id, fiber }))
        const exit = yield* Fiber.await(fiber).pipe(Effect.ensuring(Ref.set(current, Option.none())))
        const annotate = Effect.annotateLogs({ job: row.id, kind: row.kind })
        if (Exit.isSuccess(exit)) {
          const outcome = exit.value
          yield* store.finish(row.id, outcome.state, outcome.counts === undefined ? {} : { counts: outcome.counts })
          return yield* Effect.logInfo(`job ${outcome.state}`).pipe(annotate)
        }
        if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.logInfo("job stopped").pipe(annotate)
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && failure.value._tag === "JobStopped") {
          return yield* Effect.logInfo("job stopped (cancelled or superseded)").pipe(annotate)
        }
        const message = Option.match(failure, {
          onNone: () => Cause.pretty(exit.cause).split("\n")[0] ?? "unexpected error",
          onSome: (e) => e.message
        })
        yield* store.finish(row.id, "failed", { error: message })
        yield* Effect.logError("job failed").pipe(Effect.annotateLogs({ error: message }), annotate)
      })

    const loop = Effect.gen(function* () {
      const next = yield* store.nextRunnable()
      if (Option.isNone(next)) return yield* Queue.take(wake)
      yield* runOne(next.value)
    }).pipe(
      Effect.catchAll((error) =>
        // The database failed under the runner: say so, wait, and try again rather than die.
        Effect.logError("job runner error").pipe(
          Effect.annotateLogs({ error: error.message }),
          Effect.zipRight(Effect.sleep("1 second"))
        )
      ),
      Effect.forever
    )
    yield* Effect.forkScoped(loop)

    const stopCurrent = (ids: ReadonlyArray<JobId>) =>
      Effect.flatMap(Ref.get(current), (running) =>
        Option.isSome(running) && ids.includes(running.value.id) ? Fiber.interrupt(running.value.fiber) : Effect.void
      )

    const submit = Effect.fn("JobRunner.submit")(function* (kind: string, paramsJson: string, supersede: boolean) {
      const result = yield* store.submit(kind, paramsJson, supersede)
      yield* stopCurrent(result.superseded)
      yield* Queue.offer(wake, undefined)
      return result
    })

    const cancel = Effect.fn("JobRunner.cancel")(function* (selector: CancelSelector) {
      const ids = yield* store.cancel(selector)
      yield* stopCurrent(ids)
      return ids
    })

    return { submit, cancel, get: store.get } as const
  })
}) {}
