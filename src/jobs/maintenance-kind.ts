import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { countOf, firstRowOf, rowsOf, textIdRows } from "../sql/sql-rows.js"
import { type JobKindOf, registerJobKind } from "./job-kind.js"

/** The steps of one maintenance run, in order; each is committed with its checkpoint. */
export const MAINTENANCE_STEPS = ["quick_check", "prune_finished_jobs", "optimize", "record_stats"] as const

const MaintenanceParams = Schema.Struct({
  /** Finished jobs older than this many days are removed (their rows and maintenance records). */
  retention_days: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 3650)), { default: () => 30 })
})

const MaintenanceCheckpoint = Schema.Struct({ completed_steps: Schema.Int.pipe(Schema.between(0, 100)) })

type Step = (typeof MAINTENANCE_STEPS)[number]

const quickCheckRows = rowsOf(Schema.Struct({ quick_check: Schema.String }))
const pageCount = firstRowOf(Schema.Struct({ page_count: Schema.Number }))

/** Each step's work; it returns the line recorded in `maintenance_runs`. */
const work = (step: Step, retentionDays: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    switch (step) {
      case "quick_check": {
        const rows = yield* quickCheckRows(sql`PRAGMA quick_check`)
        const problems = rows.map((r) => r.quick_check).filter((r) => r !== "ok")
        return { ok: problems.length === 0, result: problems.length === 0 ? "ok" : problems.slice(0, 5).join("; ") }
      }
      case "prune_finished_jobs": {
        const cutoff = DateTime.formatIso(DateTime.subtract(yield* DateTime.now, { days: retentionDays }))
        const old = sql`SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ${cutoff}
                        AND state IN ('completed', 'partial', 'failed', 'superseded', 'cancelled')`
        yield* sql`DELETE FROM maintenance_runs WHERE job_id IN (${old})`
        const removed = yield* textIdRows(sql`DELETE FROM jobs WHERE id IN (${old}) RETURNING id`)
        return { ok: true, result: `removed ${removed.length} finished jobs older than ${retentionDays} days` }
      }
      case "optimize": {
        yield* sql`PRAGMA optimize`
        return { ok: true, result: "optimized" }
      }
      case "record_stats": {
        const jobs = yield* countOf(sql`SELECT count(*) AS n FROM jobs`)
        const pages = Option.match(yield* pageCount(sql`PRAGMA page_count`), {
          onNone: () => 0,
          onSome: (r) => r.page_count
        })
        return { ok: true, result: `jobs=${jobs} pages=${pages}` }
      }
    }
  })

export interface MaintenanceOptions {
  /**
   * Run inside each step's write transaction, after it has taken the write lock: tests compose a
   * pause here to hold the writer and to kill a job mid-step. Nothing in normal use.
   */
  readonly holdEachStep?: Effect.Effect<void>
}

/**
 * `maintenance`: checks and tidies the database in checkpointed steps. Each step's record and
 * the checkpoint commit together, so a run interrupted at any point resumes at the next step
 * and never records a step twice.
 */
export const makeMaintenanceKind = (
  options: MaintenanceOptions = {}
): JobKindOf<typeof MaintenanceParams, typeof MaintenanceCheckpoint> => ({
  name: "maintenance",
  params: MaintenanceParams,
  checkpoint: MaintenanceCheckpoint,
  run: (params, context) =>
    Effect.gen(function* () {
      const total = MAINTENANCE_STEPS.length
      const start = Option.match(context.checkpoint, { onNone: () => 0, onSome: (c) => c.completed_steps })
      let problems = 0
      for (let index = start; index < total; index++) {
        const step = MAINTENANCE_STEPS[index] as Step
        yield* context.commit(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            if (options.holdEachStep !== undefined) {
              // Take the write lock first, then hold it: the step is "long" while holding the writer.
              yield* sql`UPDATE jobs SET updated_at = updated_at WHERE id = ${context.jobId}`
              yield* options.holdEachStep
            }
            const outcome = yield* work(step, params.retention_days)
            if (!outcome.ok) problems++
            const at = DateTime.formatIso(yield* DateTime.now)
            yield* sql`INSERT INTO maintenance_runs (job_id, step, result, finished_at)
                       VALUES (${context.jobId}, ${step}, ${outcome.result}, ${at})`
          }).pipe(Effect.orDie),
          { checkpoint: { completed_steps: index + 1 }, progressDone: index + 1, progressTotal: total }
        )
      }
      return {
        state: problems === 0 ? "completed" : "partial",
        counts: { steps: total, problems }
      } as const
    })
})

export const maintenanceJobKind = registerJobKind(makeMaintenanceKind())
