import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { JobRow, toView } from "../jobs/job.js"

const decodeRows = Schema.decodeUnknown(Schema.Array(JobRow))

/** The counts and jobs the index state is judged from (read-only). */
export const readIndexStatus = (fingerprintKey: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const messages = (yield* sql<{ n: number }>`SELECT count(*) AS n FROM messages`)[0]?.n ?? 0
    // Two counts the chunks_pending index answers, rather than a scan for "not equal".
    const all = (yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks`)[0]?.n ?? 0
    const current =
      fingerprintKey === null
        ? 0
        : ((yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint = ${fingerprintKey}`)[0]
            ?.n ?? 0)
    const without = all - current
    const active = yield* sql<{ kind: string }>`SELECT DISTINCT kind FROM jobs WHERE state IN ('queued', 'running')`
    const recent = yield* decodeRows(yield* sql`SELECT * FROM jobs ORDER BY seq DESC LIMIT 10`)
    return {
      messages,
      chunks_without_vector: without,
      active_kinds: active.map((r) => r.kind),
      recent_jobs: recent.map(toView)
    }
  })
