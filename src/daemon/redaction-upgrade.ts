import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer } from "effect"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import { REDACTION_RULES_VERSION } from "../redaction/redact.js"
import { storedRulesVersion } from "../redaction/rules-version.js"
import { REDACT_KIND } from "../redaction-job/redact-kind.js"
import { countOf } from "../sql/sql-rows.js"
import { WriterDatabase } from "./writer-database.js"

/** Whether a `redact` job is already queued or running (an interrupted one is replayed). */
const redactPending = (sql: SqlClient.SqlClient) =>
  Effect.map(
    countOf(sql`SELECT count(*) AS n FROM jobs WHERE kind = ${REDACT_KIND} AND state IN ('queued', 'running')`),
    (n) => n > 0
  )

/**
 * At start: when the stored text was redacted by older rules than this daemon's, queues a `redact`
 * job (unless one is queued or running already), which redacts it again in the background and then
 * stores the new version. A failure here is logged and tried again at the next start: it never
 * keeps the daemon from starting.
 */
export const RedactionUpgradeLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const { sql } = yield* WriterDatabase
    const runner = yield* JobRunner
    const kind = (yield* JobKinds).get(REDACT_KIND)
    const stored = yield* storedRulesVersion.pipe(Effect.provideService(SqlClient.SqlClient, sql))
    if (kind === undefined || stored >= REDACTION_RULES_VERSION || (yield* redactPending(sql))) return
    const params = kind.validate({})
    if (Either.isLeft(params))
      return yield* Effect.logError("redact not queued").pipe(Effect.annotateLogs({ reason: params.left }))
    const { job } = yield* runner.submit(kind.name, params.right, false)
    yield* Effect.logInfo("stored text was redacted by older rules: redacting it again").pipe(
      Effect.annotateLogs({ job: job.id, stored_version: stored, rules_version: REDACTION_RULES_VERSION })
    )
  }).pipe(
    Effect.catchAll((e) =>
      Effect.logWarning("could not queue redacting again; tried at the next start").pipe(
        Effect.annotateLogs({ reason: "message" in e ? String(e.message) : String(e) })
      )
    )
  )
)
