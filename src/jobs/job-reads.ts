import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { firstRowOf } from "../sql/sql-rows.js"
import { type JobId, JobRow, toView } from "./job.js"

const jobRow = firstRowOf(JobRow)

/** Reads one job; runs on any connection, read-only ones included (the query workers). */
export const readJob = (id: JobId) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return Option.map(yield* jobRow(sql`SELECT * FROM jobs WHERE id = ${id}`), toView)
  })
