import { SqlClient } from "@effect/sql"
import { Data, Effect, Either, Layer } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { keepRetryingSkippedImports } from "../importer/import-retry.js"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import { WriterDatabase } from "./writer-database.js"

/** The retry cannot queue its import (no import kind, or its params refused). */
class RetryProblem extends Data.TaggedError("RetryProblem")<{ readonly message: string }> {}

/**
 * Skipped imports tried again, as a fiber for the life of the layer (`import-retry.ts`): the due
 * files are queued as an ordinary `import` job (origin `retry`) on the writer.
 */
export const ImportRetryLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const writer = yield* WriterDatabase
    const runner = yield* JobRunner
    const kinds = yield* JobKinds
    const fs = yield* SafeFs
    const submit = (paths: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const kind = kinds.get("import")
        if (kind === undefined) return yield* new RetryProblem({ message: "this daemon has no import job kind" })
        const params = kind.validate({ paths, origin: "retry" })
        if (Either.isLeft(params)) return yield* new RetryProblem({ message: `import refused: ${params.left}` })
        const submitted = yield* runner.submit(kind.name, params.right, false)
        return submitted.job.id as string
      })
    yield* Effect.forkScoped(
      keepRetryingSkippedImports(submit).pipe(
        Effect.provideService(SqlClient.SqlClient, writer.sql),
        Effect.provideService(SafeFs, fs)
      )
    )
  })
)
