import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type JobId, JobRow, toView } from "./job.js"

const decodeRow = Schema.decodeUnknown(JobRow)

/** Reads one job; runs on any connection, read-only ones included (the query workers). */
export const readJob = (id: JobId) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT * FROM jobs WHERE id = ${id}`
    const first = rows[0]
    if (first === undefined) return Option.none()
    return Option.some(toView(yield* decodeRow(first)))
  })
