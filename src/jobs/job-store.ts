import { randomUUID } from "node:crypto"
import * as NodePath from "node:path"
import { SqlClient, SqlError } from "@effect/sql"
import { Cause, DateTime, Effect, Option, type ParseResult, Schema } from "effect"
import { Paths } from "../paths/paths.js"
import { rowsOf } from "../sql/sql-rows.js"
import { diskFullMessage, freeBytes, isDiskFull } from "../store/disk-space.js"
import { StoreError } from "../store/store-error.js"
import { type JobCounts, JobId, JobRow, type JobState, type JobView, toView } from "./job.js"
import { JobStopped } from "./job-errors.js"

const jobRows = rowsOf(JobRow)
const jobIdRows = rowsOf(Schema.Struct({ id: JobId }))

/** Which active jobs CancelJobs addresses: given ids, every job of a kind, or (neither) all. */
export interface CancelSelector {
  readonly jobIds?: ReadonlyArray<JobId>
  readonly kind?: string
}

const ACTIVE = ["queued", "running"] as const

/**
 * The `jobs` table. Every write here is a short transaction on the daemon's writer connection;
 * a job's progress and checkpoint are committed together with the work they describe.
 */
export class JobStore extends Effect.Service<JobStore>()("blctx/JobStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const path = (yield* Paths).database
    const now = DateTime.now.pipe(Effect.map(DateTime.formatIso))

    /** A full disk is said as such, with the free space left and the remedy, whatever was being done. */
    const diskFull = () =>
      new StoreError({ path, message: diskFullMessage(path, freeBytes(NodePath.dirname(path))), diskFull: true })

    const storeError = (what: string) => (e: SqlError.SqlError | ParseResult.ParseError) =>
      isDiskFull(e) ? diskFull() : new StoreError({ path, message: `${what}: ${e.message}` })

    const rows = (effect: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>, what: string) =>
      jobRows(effect).pipe(Effect.mapError(storeError(what)))

    const get = Effect.fn("JobStore.get")(function* (id: JobId) {
      const found = yield* rows(sql`SELECT * FROM jobs WHERE id = ${id}`, "could not read job")
      return Option.map(Option.fromNullable(found[0]), toView)
    })

    const submit = Effect.fn("JobStore.submit")(function* (kind: string, paramsJson: string, supersede: boolean) {
      const id = JobId.make(randomUUID())
      const at = yield* now
      const superseded = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const replaced = supersede
              ? yield* jobIdRows(sql`UPDATE jobs SET state = 'superseded', finished_at = ${at}, updated_at = ${at}
                  WHERE kind = ${kind} AND state IN ${sql.in(ACTIVE)} RETURNING id`)
              : []
            yield* sql`INSERT INTO jobs (id, kind, params, state, submitted_at, updated_at)
                       VALUES (${id}, ${kind}, ${paramsJson}, 'queued', ${at}, ${at})`
            return replaced.map((r) => r.id)
          })
        )
        .pipe(Effect.mapError(storeError("could not record the job")))
      const view = yield* get(id)
      return { job: Option.getOrThrow(view), superseded }
    })

    /** The oldest job that still has work: interrupted (`running`) or `queued`. */
    const nextRunnable = Effect.fn("JobStore.nextRunnable")(function* () {
      const found = yield* rows(
        sql`SELECT * FROM jobs WHERE state IN ${sql.in(ACTIVE)} ORDER BY seq LIMIT 1`,
        "could not read the queue"
      )
      return Option.fromNullable(found[0])
    })

    /** Marks a job running (again, on replay); false when it was cancelled meanwhile. */
    const start = Effect.fn("JobStore.start")(function* (id: JobId) {
      const at = yield* now
      const changed = yield* jobIdRows(sql`UPDATE jobs
          SET state = 'running', started_at = COALESCE(started_at, ${at}), attempts = attempts + 1, updated_at = ${at}
          WHERE id = ${id} AND state IN ${sql.in(ACTIVE)} RETURNING id`).pipe(
        Effect.mapError(storeError("could not start the job"))
      )
      return changed.length === 1
    })

    /** Runs `work` and the checkpoint update in one transaction; rolls back if the job was stopped. */
    const commitStep = <E>(
      id: JobId,
      work: Effect.Effect<void, E, SqlClient.SqlClient>,
      next: {
        readonly checkpoint: string
        readonly progressDone: number
        readonly progressTotal?: number
        readonly counts?: JobCounts
      }
    ): Effect.Effect<void, E | JobStopped | StoreError> =>
      Effect.gen(function* () {
        const at = yield* now
        const counts = next.counts === undefined ? null : JSON.stringify(next.counts)
        // SQLite rolls a transaction back by itself on SQLITE_FULL, so the ROLLBACK that follows
        // fails (a defect in @effect/sql) and hides the first error: remember that one.
        let sawDiskFull = false
        const noteDiskFull = (cause: Cause.Cause<unknown>) =>
          Effect.sync(() => {
            if ([...Cause.failures(cause), ...Cause.defects(cause)].some(isDiskFull)) sawDiskFull = true
          })
        yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const still = yield* jobIdRows(sql`SELECT id FROM jobs WHERE id = ${id} AND state = 'running'`).pipe(
                Effect.mapError(storeError("could not read the job"))
              )
              if (still.length === 0) return yield* new JobStopped({ jobId: id })
              yield* Effect.provideService(work, SqlClient.SqlClient, sql)
              // A known total is never below what is done (done ≤ total, whatever a kind reports).
              yield* sql`UPDATE jobs SET checkpoint = ${next.checkpoint}, progress_done = ${next.progressDone},
                progress_total = CASE
                  WHEN COALESCE(${next.progressTotal ?? null}, progress_total) IS NULL THEN NULL
                  ELSE max(COALESCE(${next.progressTotal ?? null}, progress_total), ${next.progressDone})
                END,
                counts = COALESCE(${counts}, counts), updated_at = ${at}
                WHERE id = ${id}`.pipe(Effect.mapError(storeError("could not record the checkpoint")))
            }).pipe(Effect.tapErrorCause(noteDiskFull))
          )
          .pipe(
            // A failed COMMIT or ROLLBACK is a defect there; on a full disk it is a full disk.
            Effect.catchAllDefect((defect) =>
              sawDiskFull || isDiskFull(defect) ? Effect.fail(diskFull()) : Effect.die(defect)
            ),
            Effect.catchIf(
              (e): e is SqlError.SqlError => e instanceof SqlError.SqlError,
              (e) => Effect.fail(storeError("could not commit the step")(e))
            ),
            // Whatever the work made of it (a kind's own error keeps the driver's as its cause),
            // a full disk fails the step as a full disk: every later step would fail the same way.
            Effect.catchIf(
              (e) => (sawDiskFull || isDiskFull(e)) && !(e instanceof StoreError && e.diskFull === true),
              () => Effect.fail(diskFull())
            )
          )
      }).pipe(Effect.withSpan("JobStore.commitStep", { attributes: { job: id } }))

    /** Ends a running job; a job cancelled or superseded meanwhile keeps that state. */
    const finish = Effect.fn("JobStore.finish")(function* (
      id: JobId,
      state: Extract<JobState, "completed" | "partial" | "failed">,
      details: { readonly counts?: JobCounts; readonly error?: string }
    ) {
      const at = yield* now
      const counts = details.counts === undefined ? null : JSON.stringify(details.counts)
      yield* sql`UPDATE jobs SET state = ${state}, error = ${details.error ?? null},
          counts = COALESCE(${counts}, counts), finished_at = ${at}, updated_at = ${at}
          WHERE id = ${id} AND state = 'running'`.pipe(Effect.mapError(storeError("could not finish the job")))
    })

    /** Marks active jobs cancelled; returns the ids it changed. Terminal jobs are never revived. */
    const cancel = Effect.fn("JobStore.cancel")(function* (selector: CancelSelector) {
      const at = yield* now
      const ids = selector.jobIds ?? []
      const which =
        selector.jobIds !== undefined
          ? sql`id IN ${sql.in(ids)}`
          : selector.kind !== undefined
            ? sql`kind = ${selector.kind}`
            : sql.literal("1 = 1")
      if (selector.jobIds !== undefined && ids.length === 0) return []
      const changed = yield* jobIdRows(sql`UPDATE jobs SET state = 'cancelled', finished_at = ${at}, updated_at = ${at}
          WHERE ${which} AND state IN ${sql.in(ACTIVE)} RETURNING id`).pipe(
        Effect.mapError(storeError("could not cancel jobs"))
      )
      return changed.map((r) => r.id)
    })

    return { get, submit, nextRunnable, start, commitStep, finish, cancel } as const
  })
}) {}

export type { JobView }
