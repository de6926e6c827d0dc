import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { JobRow, toView } from "../jobs/job.js"

const decodeRows = Schema.decodeUnknown(Schema.Array(JobRow))

/** The counts and jobs the index state is judged from (read-only). */
export const readIndexStatus = (fingerprintKey: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Whether any message exists, and the chunks without a vector of the current model counted
    // through the chunks_pending index (NULL, below and above the key): a search judges the index
    // every time, and counting every row of 100k chunks and messages cost it milliseconds.
    const hasMessages = (yield* sql<{ n: number }>`SELECT EXISTS (SELECT 1 FROM messages) AS n`)[0]?.n === 1
    const count = (rows: ReadonlyArray<{ n: number }>) => rows[0]?.n ?? 0
    const without =
      fingerprintKey === null
        ? count(yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks`)
        : count(yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint IS NULL`) +
          count(
            yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint < ${fingerprintKey}`
          ) +
          count(
            yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint > ${fingerprintKey}`
          )
    const active = yield* sql<{ kind: string }>`SELECT DISTINCT kind FROM jobs WHERE state IN ('queued', 'running')`
    const recent = yield* decodeRows(yield* sql`SELECT * FROM jobs ORDER BY seq DESC LIMIT 10`)
    return {
      has_messages: hasMessages,
      chunks_without_vector: without,
      active_kinds: active.map((r) => r.kind),
      recent_jobs: recent.map(toView)
    }
  })
