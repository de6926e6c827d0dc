import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Schema, Scope } from "effect"
import { Paths } from "../paths/paths.js"
import type { JobId, JobView } from "./job.js"
import { migratedDatabase, Reader, readerOf } from "./job-db.test-support.js"
import { makeRegistry, registerJobKind } from "./job-kind.js"
import { JobKinds } from "./job-kinds.js"
import { readJob } from "./job-reads.js"
import { JobRunner } from "./job-runner.js"
import { JobStore } from "./job-store.js"
import { maintenanceJobKind } from "./maintenance-kind.js"

const Empty = Schema.Struct({})

/** A job that never ends and cannot be interrupted: what a read stuck in the kernel looks like to the runner. */
const stuckKind = registerJobKind({
  name: "stuck",
  params: Empty,
  checkpoint: Empty,
  run: () => Effect.uninterruptible(Effect.never)
})

/** A job that ends partial with a note saying why. */
const notedKind = registerJobKind({
  name: "noted",
  params: Empty,
  checkpoint: Empty,
  run: () => Effect.succeed({ state: "partial", counts: { files_unreadable: 1 }, note: "/x/pipe: is a FIFO" } as const)
})

const dbLayer = (dir: string) => {
  const database = NodePath.join(dir, "context.db")
  const ReaderLive = readerOf(database)
  const Sql = migratedDatabase(database)
  return Layer.merge(JobStore.Default, ReaderLive).pipe(
    Layer.provideMerge(Sql),
    Layer.provide(Paths.layerFrom({ home: dir }))
  )
}

const runnerLayer = JobRunner.Default.pipe(
  Layer.provide(Layer.succeed(JobKinds, makeRegistry([maintenanceJobKind, stuckKind, notedKind])))
)

/** A temp dir with a migrated database; removed with the scope. */
const withDb = <A, E>(
  use: (dir: string) => Effect.Effect<A, E, JobStore | Reader | SqlClient.SqlClient | Scope.Scope>
) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-runner-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    return yield* use(dir).pipe(Effect.provide(dbLayer(dir)))
  })

const waitForJob = (id: JobId, what: string, done: (job: JobView) => boolean) =>
  Effect.gen(function* () {
    const reader = yield* Reader
    for (let i = 0; i < 1200; i++) {
      const job = yield* readJob(id).pipe(Effect.provideService(SqlClient.SqlClient, reader))
      if (Option.isSome(job) && done(job.value)) return job.value
      yield* Effect.sleep("25 millis")
    }
    return yield* Effect.dieMessage(`job ${id} never ${what}`)
  })

const waitForState = (id: JobId, states: ReadonlyArray<string>) =>
  waitForJob(id, `reached ${states.join("/")}`, (job) => states.includes(job.state))

/** Fails the test instead of hanging it when `effect` does not return. */
const bounded = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: "20 seconds", onTimeout: () => new Error(`${what} did not return`) })

describe("JobRunner bounds", () => {
  it.scopedLive("cancelling a job that will not stop returns, and the next job runs", () =>
    withDb(() =>
      Effect.gen(function* () {
        const runner = yield* JobRunner
        const stuck = yield* runner.submit("stuck", "{}", false)
        yield* waitForState(stuck.job.id, ["running"])
        const next = yield* runner.submit("maintenance", "{}", false)
        expect(yield* bounded("cancel", runner.cancel({ jobIds: [stuck.job.id] }))).toEqual([stuck.job.id])
        expect((yield* waitForState(next.job.id, ["completed", "failed"])).state).toBe("completed")
        expect((yield* waitForState(stuck.job.id, ["cancelled"])).state).toBe("cancelled")
      }).pipe(Effect.provide(runnerLayer))
    )
  )

  it.scopedLive("superseding a job that will not stop returns, and the replacement runs", () =>
    withDb(() =>
      Effect.gen(function* () {
        const runner = yield* JobRunner
        const stuck = yield* runner.submit("stuck", "{}", false)
        yield* waitForState(stuck.job.id, ["running"])
        const replacement = yield* bounded("supersede", runner.submit("stuck", "{}", true))
        expect(replacement.superseded).toEqual([stuck.job.id])
        yield* waitForState(replacement.job.id, ["running"])
        yield* bounded("cancel", runner.cancel({ kind: "stuck" }))
        const next = yield* runner.submit("maintenance", "{}", false)
        expect((yield* waitForState(next.job.id, ["completed", "failed"])).state).toBe("completed")
      }).pipe(Effect.provide(runnerLayer))
    )
  )

  it.scopedLive("stopping the runner while a job will not stop returns; the job resumes with the next runner", () =>
    withDb(() =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const first = yield* Layer.buildWithScope(runnerLayer, scope)
        const stuck = yield* Context.get(first, JobRunner).submit("stuck", "{}", false)
        yield* waitForState(stuck.job.id, ["running"])
        yield* bounded("closing the runner", Scope.close(scope, Exit.void))
        // Still `running`: an interrupted job is resumed by the next runner, as after a restart.
        expect((yield* waitForState(stuck.job.id, ["running"])).attempts).toBe(1)
        const second = yield* Layer.build(runnerLayer)
        yield* waitForJob(stuck.job.id, "was resumed", (job) => job.state === "running" && job.attempts === 2)
        yield* bounded("cancel", Context.get(second, JobRunner).cancel({ jobIds: [stuck.job.id] }))
        expect((yield* waitForState(stuck.job.id, ["cancelled"])).state).toBe("cancelled")
      })
    )
  )

  it.scopedLive("a job that ends partial says why in its error text", () =>
    withDb(() =>
      Effect.gen(function* () {
        const runner = yield* JobRunner
        const noted = yield* runner.submit("noted", "{}", false)
        const done = yield* waitForState(noted.job.id, ["partial", "completed", "failed"])
        expect(done.state).toBe("partial")
        expect(done.error).toBe("/x/pipe: is a FIFO")
      }).pipe(Effect.provide(runnerLayer))
    )
  )
})
