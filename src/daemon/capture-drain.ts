import { SqlClient } from "@effect/sql"
import { Clock, Data, Duration, Effect, Either, Layer, Option } from "effect"
import { drainSpool } from "../capture/capture-drain.js"
import { makeCaptureStore } from "../capture/capture-drain-store.js"
import { reconcileBindings } from "../capture/reconcile-pass.js"
import { SafeFs } from "../fs/safe-fs.js"
import { JobId } from "../jobs/job.js"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import { makeCaptureFacts } from "./capture-facts.js"
import { DaemonConfig } from "./daemon-config.js"
import { WriterDatabase } from "./writer-database.js"

/** Capture cannot queue the import it needs (no import kind, or its params refused). */
class CaptureProblem extends Data.TaggedError("CaptureProblem")<{ readonly message: string }> {}

const ACTIVE_JOB_STATES: ReadonlyArray<string> = ["queued", "running"]

/** How often the spool is looked at: a readdir of a folder that is almost always empty. */
export const CAPTURE_DRAIN_INTERVAL = Duration.seconds(1)
/**
 * How often bound transcripts are compared with the index even without a new event: an agent
 * that crashes never sends SessionEnd, and its last words must still be indexed.
 */
export const CAPTURE_RECONCILE_INTERVAL = Duration.seconds(30)

/**
 * The daemon side of capture, as a fiber for the life of the layer: drains the hooks' spool into
 * the capture tables, then reconciles the bound transcripts with the index, queuing an import
 * (the ordinary `import` job) for each one that changed. Reconciliation runs right after a drain
 * that recorded an event, as soon as the import it queued ends, and every
 * `CAPTURE_RECONCILE_INTERVAL` otherwise. The spool is polled
 * rather than watched: a readdir a second costs nothing, and nothing waits on a drain (prompt
 * recall asks the daemon directly). A failing pass is logged once per new problem and retried.
 */
export const CaptureDrainLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const writer = yield* WriterDatabase
    const config = yield* DaemonConfig
    const runner = yield* JobRunner
    const kinds = yield* JobKinds
    const fs = yield* SafeFs
    const facts = yield* makeCaptureFacts
    const store = makeCaptureStore({ sql: writer.sql, database: writer.path })
    const onWriter = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | SafeFs>) =>
      effect.pipe(Effect.provideService(SqlClient.SqlClient, writer.sql), Effect.provideService(SafeFs, fs))

    const expectations = Effect.map(facts.hookGenerations, (registered) => ({
      installationId: config["installation-id"],
      generations: new Map(registered.map((h) => [h.generation, h.agent] as const))
    }))

    const submitImport = (paths: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const kind = kinds.get("import")
        if (kind === undefined) return yield* new CaptureProblem({ message: "this daemon has no import job kind" })
        const params = kind.validate({ paths, origin: "capture" })
        if (Either.isLeft(params)) return yield* new CaptureProblem({ message: `import refused: ${params.left}` })
        const submitted = yield* runner.submit(kind.name, params.right, false)
        return submitted.job.id as string
      })

    const drain = onWriter(drainSpool(facts.spoolDir, store, expectations))
    const reconcile = onWriter(reconcileBindings(writer.path, submitImport))

    /** Logs a failed pass once per new problem, not at every look. */
    const reported = (what: string, last: { message: string }) => (e: { readonly message: string }) =>
      e.message === last.message
        ? Effect.void
        : Effect.sync(() => {
            last.message = e.message
          }).pipe(
            Effect.zipRight(
              Effect.logWarning(`capture ${what} failed`).pipe(Effect.annotateLogs({ reason: e.message }))
            )
          )

    /** Whether the import job queued last has ended (a missing row has too). */
    const jobEnded = (id: string) =>
      runner.get(JobId.make(id)).pipe(
        Effect.map((job) => Option.isNone(job) || !ACTIVE_JOB_STATES.includes(job.value.state)),
        Effect.orElseSucceed(() => false)
      )

    const loop = Effect.gen(function* () {
      const drainProblem = { message: "" }
      const reconcileProblem = { message: "" }
      let lastReconcile = Number.NEGATIVE_INFINITY
      // The import queued by the last reconciliation: when it ends, its bindings are judged again
      // at once (one job row read per look until then), not at the next periodic pass.
      let awaited: string | null = null
      while (true) {
        const drained = yield* drain.pipe(
          Effect.tap(() => Effect.sync(() => (drainProblem.message = ""))),
          Effect.tap((o) =>
            o.recorded + o.rejected > 0
              ? Effect.logInfo("capture drained").pipe(
                  Effect.annotateLogs({ recorded: o.recorded, refused: o.rejected })
                )
              : Effect.void
          ),
          Effect.map((o) => o.recorded),
          Effect.catchAll((e) => Effect.as(reported("drain", drainProblem)(e), 0))
        )
        const now = yield* Clock.currentTimeMillis
        const importEnded = awaited !== null && (yield* jobEnded(awaited))
        if (importEnded || drained > 0 || now - lastReconcile >= Duration.toMillis(CAPTURE_RECONCILE_INTERVAL)) {
          lastReconcile = now
          if (importEnded) awaited = null
          yield* reconcile.pipe(
            Effect.tap((o) =>
              Effect.sync(() => {
                reconcileProblem.message = ""
                if (o.jobId !== null) awaited = o.jobId
              })
            ),
            Effect.catchAll(reported("reconciliation", reconcileProblem))
          )
        }
        yield* Effect.sleep(CAPTURE_DRAIN_INTERVAL)
      }
    })
    yield* Effect.forkScoped(loop)
  })
)
