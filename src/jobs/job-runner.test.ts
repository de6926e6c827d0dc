import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { Paths } from "../paths/paths.js"
import { JobId } from "./job.js"
import { migratedDatabase, Reader, readerOf } from "./job-db.test-support.js"
import { makeRegistry, registerJobKind } from "./job-kind.js"
import { JobKinds } from "./job-kinds.js"
import { readJob } from "./job-reads.js"
import { JobRunner } from "./job-runner.js"
import { JobStore } from "./job-store.js"
import { MAINTENANCE_STEPS, makeMaintenanceKind } from "./maintenance-kind.js"

/** How long each maintenance step holds the writer; a test sets it to keep a job running. */
let holdMs = 0
const maintenanceJobKind = registerJobKind(
  makeMaintenanceKind({ holdEachStep: Effect.suspend(() => Effect.sleep(Duration.millis(holdMs))) })
)

/** A migrated database in a fresh temp dir, its SqlClient, a runner over it. */

const testLayer = () => {
  const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-jobs-"))
  const database = NodePath.join(dir, "context.db")
  const ReaderLive = readerOf(database)
  const Sql = Layer.merge(
    migratedDatabase(database),
    Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  )
  return Layer.merge(JobRunner.Default, ReaderLive).pipe(
    Layer.provideMerge(JobStore.Default),
    Layer.provideMerge(Sql),
    Layer.provide(Layer.succeed(JobKinds, makeRegistry([maintenanceJobKind]))),
    Layer.provide(Paths.layerFrom({ home: dir }))
  )
}

const waitForState = (id: JobId, states: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const reader = yield* Reader
    for (let i = 0; i < 400; i++) {
      const job = yield* readJob(id).pipe(Effect.provideService(SqlClient.SqlClient, reader))
      if (Option.isSome(job) && states.includes(job.value.state)) return job.value
      yield* Effect.sleep("25 millis")
    }
    return yield* Effect.dieMessage(`job ${id} never reached ${states.join("/")}`)
  })

const stepsOf = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ step: string }>`SELECT step FROM maintenance_runs WHERE job_id = ${id} ORDER BY rowid`
  ).pipe(Effect.map((rows) => rows.map((r) => r.step)))

describe("JobRunner", () => {
  it.scopedLive("runs a submitted maintenance job to completion, each step recorded once", () =>
    Effect.gen(function* () {
      const runner = yield* JobRunner
      const { job } = yield* runner.submit("maintenance", "{}", false)
      expect(job.state).toBe("queued")
      const done = yield* waitForState(job.id, ["completed", "partial", "failed"])
      expect(done.state).toBe("completed")
      expect(done.progress_done).toBe(MAINTENANCE_STEPS.length)
      expect(done.counts).toEqual({ steps: 4, problems: 0 })
      expect(yield* stepsOf(job.id)).toEqual([...MAINTENANCE_STEPS])
    }).pipe(Effect.provide(testLayer()))
  )

  it.scopedLive("resumes an interrupted job after its last checkpoint, never redoing committed steps", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const id = JobId.make("0b0e6d8c-1d55-4f34-9a55-5c8f1b1c6a01")
      // What a daemon killed after two committed steps leaves behind.
      yield* sql`INSERT INTO jobs (id, kind, params, state, progress_done, checkpoint, attempts, submitted_at, updated_at)
                 VALUES (${id}, 'maintenance', '{"retention_days":30}', 'running', 2,
                         '{"completed_steps":2}', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`
      for (const step of MAINTENANCE_STEPS.slice(0, 2)) {
        yield* sql`INSERT INTO maintenance_runs VALUES (${id}, ${step}, 'ok', '2026-01-01T00:00:00Z')`
      }
      const runner = yield* JobRunner
      yield* runner.submit("maintenance", "{}", false) // wakes the runner; also queued behind the replay
      const done = yield* waitForState(id, ["completed", "failed"])
      expect(done.state).toBe("completed")
      expect(done.attempts).toBe(2)
      expect(yield* stepsOf(id)).toEqual([...MAINTENANCE_STEPS])
    }).pipe(Effect.provide(testLayer()))
  )

  it.scopedLive("cancel and supersede mark jobs so that they never run", () =>
    Effect.gen(function* () {
      const runner = yield* JobRunner
      const slow = JSON.stringify({ retention_days: 30 })
      holdMs = 1_000
      const first = yield* runner.submit("maintenance", slow, false)
      yield* waitForState(first.job.id, ["running"])
      holdMs = 0
      const replacement = yield* runner.submit("maintenance", "{}", true)
      expect(replacement.superseded).toEqual([first.job.id])
      expect((yield* waitForState(replacement.job.id, ["completed"])).state).toBe("completed")
      expect((yield* waitForState(first.job.id, ["superseded"])).state).toBe("superseded")
      holdMs = 1_000
      const queued = yield* runner.submit("maintenance", slow, false)
      const cancelled = yield* runner.cancel({ jobIds: [queued.job.id] })
      expect(cancelled).toEqual([queued.job.id])
      expect((yield* waitForState(queued.job.id, ["cancelled"])).state).toBe("cancelled")
      expect(yield* stepsOf(queued.job.id)).toEqual([])
      // The superseded job's open step was rolled back; it never completes its steps.
      expect((yield* stepsOf(first.job.id)).length).toBeLessThan(MAINTENANCE_STEPS.length)
      // A cancelled job stays cancelled: cancelling again changes nothing.
      expect(yield* runner.cancel({ jobIds: [queued.job.id] })).toEqual([])
      holdMs = 0
    }).pipe(Effect.provide(testLayer()))
  )

  it.scopedLive("fails a job whose kind this daemon does not know, and moves on", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const id = JobId.make("2c4b1a3e-7d6f-4e2a-8b1c-9d0e1f2a3b4c")
      yield* sql`INSERT INTO jobs (id, kind, params, state, submitted_at, updated_at)
                 VALUES (${id}, 'import', '{}', 'queued', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`
      const runner = yield* JobRunner
      const next = yield* runner.submit("maintenance", "{}", false)
      const failed = yield* waitForState(id, ["failed"])
      expect(failed.error).toBe("unknown job kind import")
      expect((yield* waitForState(next.job.id, ["completed"])).state).toBe("completed")
    }).pipe(Effect.provide(testLayer()))
  )
})
