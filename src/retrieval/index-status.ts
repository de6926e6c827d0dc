import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { JobRow, toView } from "../jobs/job.js"
import { countOf, rowsOf } from "../sql/sql-rows.js"

const jobRows = rowsOf(JobRow)
const kindRows = rowsOf(Schema.Struct({ kind: Schema.String }))

/** The counts and jobs the index state is judged from (read-only). */
export const readIndexStatus = (fingerprintKey: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Whether any message exists, and the chunks without a vector of the current model counted
    // through the chunks_pending index (NULL, below and above the key): a search judges the index
    // every time, and counting every row of 100k chunks and messages cost it milliseconds.
    const hasMessages = (yield* countOf(sql`SELECT EXISTS (SELECT 1 FROM messages) AS n`)) === 1
    const without =
      fingerprintKey === null
        ? yield* countOf(sql`SELECT count(*) AS n FROM chunks`)
        : (yield* countOf(sql`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint IS NULL`)) +
          (yield* countOf(sql`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint < ${fingerprintKey}`)) +
          (yield* countOf(sql`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint > ${fingerprintKey}`))
    const active = yield* kindRows(sql`SELECT DISTINCT kind FROM jobs WHERE state IN ('queued', 'running')`)
    const recent = yield* jobRows(sql`SELECT * FROM jobs ORDER BY seq DESC LIMIT 10`)
    return {
      has_messages: hasMessages,
      chunks_without_vector: without,
      active_kinds: active.map((r) => r.kind),
      recent_jobs: recent.map(toView)
    }
  })
