import { Cause, Deferred, Duration, Effect, Exit, Fiber, FiberId, Option, Queue, Ref } from "effect"
import type { JobId, JobRow } from "./job.js"
import type { JobOutcome } from "./job-kind.js"
import { JobKinds } from "./job-kinds.js"
import { type CancelSelector, JobStore } from "./job-store.js"

/**
 * How long stopping a job (cancel, supersede, shutdown) waits for it to end. A job stuck where it
 * cannot be interrupted (a read the kernel never completes) is then abandoned: the runner stops
 * waiting for it and goes on, so it can hold up neither the queue nor the caller. Its row is
 * marked as the stop says (cancelled, superseded, or left `running` to resume after a restart),
 * and should it ever wake, its next commit finds the job no longer running and rolls back.
 */
export const STOP_LIMIT = Duration.seconds(3)

interface RunningJob {
  readonly id: JobId
  readonly kind: string
  readonly fiber: Fiber.RuntimeFiber<JobOutcome, unknown>
  /** Completed when the runner gives up waiting for the job. */
  readonly abandon: Deferred.Deferred<void>
}

/**
 * The single writer: one fiber takes jobs from the durable queue and runs them one at a time.
 * Interrupted jobs (`running` rows left by a crash or a shutdown) are picked up again first,
 * resuming from their last committed checkpoint. A job that ends `partial` with a note keeps the
 * note as its error text, so index-status says what was left out.
 */
export class JobRunner extends Effect.Service<JobRunner>()("blctx/JobRunner", {
  scoped: Effect.gen(function* () {
    const store = yield* JobStore
    const kinds = yield* JobKinds
    const wake = yield* Queue.sliding<void>(1)
    const current = yield* Ref.make(Option.none<RunningJob>())
    // Taken to pick and start the next job, and by cancel/supersede around "stop the running
    // job, mark it": so a stopped job is never picked up again before it is marked.
    const gate = yield* Effect.makeSemaphore(1)

    /**
     * Interrupts a job and waits for it at most STOP_LIMIT; then abandons it. The wait runs in a
     * fiber of its own, interruptible, because `stop` is also a finalizer (runner shutdown), where
     * the timeout could not interrupt a wait that never ends.
     */
    const stop = (job: RunningJob) =>
      Fiber.interruptFork(job.fiber).pipe(
        Effect.zipRight(Fiber.await(job.fiber)),
        Effect.timeout(STOP_LIMIT),
        Effect.catchTag("TimeoutException", () =>
          Effect.logWarning("job did not stop in time; abandoned").pipe(
            Effect.annotateLogs({ job: job.id, kind: job.kind }),
            Effect.zipRight(Deferred.succeed(job.abandon, undefined))
          )
        ),
        Effect.interruptible,
        Effect.forkDaemon,
        Effect.flatMap(Fiber.await),
        Effect.asVoid
      )

    const runOne = (row: JobRow) =>
      Effect.gen(function* () {
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
        // A daemon fiber: one that will not stop must not keep the runner's own scope from closing.
        const fiber = yield* Effect.forkDaemon(
          kind.run(row.params, Option.fromNullable(row.checkpoint), {
            jobId: row.id,
            commit: (work, next) => store.commitStep(row.id, work, next)
          })
        )
        const job: RunningJob = { id: row.id, kind: row.kind, fiber, abandon: yield* Deferred.make<void>() }
        yield* Ref.set(current, Option.some(job))
        const abandoned = Deferred.await(job.abandon).pipe(Effect.as(Exit.interrupt(FiberId.none)))
        const exit = yield* Effect.raceFirst(Fiber.await(fiber), abandoned).pipe(
          Effect.onInterrupt(() => stop(job)),
          Effect.ensuring(Ref.set(current, Option.none()))
        )
        const annotate = Effect.annotateLogs({ job: row.id, kind: row.kind })
        if (Exit.isSuccess(exit)) {
          const outcome = exit.value
          yield* store.finish(row.id, outcome.state, {
            ...(outcome.counts === undefined ? {} : { counts: outcome.counts }),
            ...(outcome.note === undefined ? {} : { error: outcome.note })
          })
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
        // The tag names the cause (EmbeddingFailed, HistoryStoreError, StoreError, ...), for the log.
        const cause = Option.match(failure, { onNone: () => "defect", onSome: (e) => e._tag })
        yield* Effect.logError("job failed").pipe(Effect.annotateLogs({ error: message, cause }), annotate)
      })

    const loop = Effect.gen(function* () {
      const next = yield* gate.withPermits(1)(
        Effect.gen(function* () {
          const candidate = yield* store.nextRunnable()
          if (Option.isNone(candidate)) return Option.none<JobRow>()
          return (yield* store.start(candidate.value.id)) ? candidate : Option.none<JobRow>()
        })
      )
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

    /** Stops the running job if `matches` says so (its open step rolls back), waiting at most STOP_LIMIT. */
    const stopCurrentIf = (matches: (job: { readonly id: JobId; readonly kind: string }) => boolean) =>
      Effect.flatMap(Ref.get(current), (running) =>
        Option.isSome(running) && matches(running.value) ? stop(running.value) : Effect.void
      )

    const submit = Effect.fn("JobRunner.submit")(function* (kind: string, paramsJson: string, supersede: boolean) {
      const result = yield* gate.withPermits(1)(
        Effect.zipRight(
          supersede ? stopCurrentIf((job) => job.kind === kind) : Effect.void,
          store.submit(kind, paramsJson, supersede)
        )
      )
      yield* Queue.offer(wake, undefined)
      return result
    })

    const cancel = Effect.fn("JobRunner.cancel")(function* (selector: CancelSelector) {
      const ids = yield* gate.withPermits(1)(
        Effect.zipRight(
          stopCurrentIf((job) =>
            selector.jobIds !== undefined
              ? selector.jobIds.includes(job.id)
              : selector.kind === undefined || selector.kind === job.kind
          ),
          store.cancel(selector)
        )
      )
      // A job stopped here but not cancelled (it was not selected after all) runs again.
      yield* Queue.offer(wake, undefined)
      return ids
    })

    return { submit, cancel, get: store.get } as const
  })
}) {}
