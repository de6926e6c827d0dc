import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Paths } from "../paths/paths.js"
import { migratedDatabase } from "./job-db.test-support.js"
import { JobStore } from "./job-store.js"

const testLayer = () => {
  const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-job-store-"))
  const database = NodePath.join(dir, "context.db")
  const Sql = Layer.merge(
    migratedDatabase(database),
    Layer.scopedDiscard(Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  )
  return JobStore.Default.pipe(Layer.provideMerge(Sql), Layer.provide(Paths.layerFrom({ home: dir })))
}

describe("JobStore progress", () => {
  it.scoped("a recorded total is never below what is done; an unknown total stays unknown", () =>
    Effect.gen(function* () {
      const store = yield* JobStore
      const { job } = yield* store.submit("maintenance", "{}", false)
      expect(yield* store.start(job.id)).toBe(true)
      const progress = (done: number, total?: number) =>
        Effect.gen(function* () {
          yield* store.commitStep(job.id, Effect.void, {
            checkpoint: "{}",
            progressDone: done,
            ...(total === undefined ? {} : { progressTotal: total })
          })
          const view = Option.getOrThrow(yield* store.get(job.id))
          return [view.progress_done, view.progress_total]
        })
      expect(yield* progress(0)).toEqual([0, null])
      expect(yield* progress(2)).toEqual([2, null])
      expect(yield* progress(3, 6)).toEqual([3, 6])
      // A commit without a total keeps the last one.
      expect(yield* progress(5)).toEqual([5, 6])
      // A kind that reports more done than its total (e.g. counting two units) cannot show 12/6.
      expect(yield* progress(12, 6)).toEqual([12, 12])
      expect(yield* progress(13)).toEqual([13, 13])
    }).pipe(Effect.provide(testLayer()))
  )
})
