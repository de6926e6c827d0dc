import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { countOf, firstRowOf, rowsOf } from "../sql/sql-rows.js"
import { CaptureStatus, REFUSED_PREFIX } from "./capture-status.js"

const eventCounts = rowsOf(
  Schema.Struct({ event: Schema.String, n: Schema.Number, last: Schema.NullOr(Schema.String) })
)
const stateCounts = rowsOf(Schema.Struct({ state: Schema.String, n: Schema.Number }))
const newestReason = firstRowOf(Schema.Struct({ reason: Schema.NullOr(Schema.String) }))

/**
 * The request of the capture read: the hook generations the manifest registers now (the daemon
 * reads the manifest; a reader only reads the database), or null for every generation (the
 * manifest could not be read).
 */
export const CaptureCountsRequest = Schema.Struct({
  generations: Schema.NullOr(Schema.Array(Schema.String.pipe(Schema.maxLength(200))).pipe(Schema.maxItems(1000)))
})
export type CaptureCountsRequest = typeof CaptureCountsRequest.Type

/**
 * Capture as the database holds it, for the current generations: events by type, bindings by
 * state, refused captures and the newest problem. `pending` counts only bindings whose newest
 * content is not indexed yet; the daemon adds the records still in the spool (a readdir it does
 * itself), which a database reader cannot see.
 */
export const readCaptureCounts = (request: CaptureCountsRequest) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const generations = request.generations
    const current =
      generations === null
        ? sql.literal("1")
        : generations.length === 0
          ? sql.literal("0")
          : sql`generation IN ${sql.in(generations)}`
    const events = yield* eventCounts(sql`
      SELECT event, count(*) AS n, max(received_at) AS last FROM capture_events WHERE ${current} GROUP BY event`)
    const bindings = yield* stateCounts(sql`
      SELECT state, count(*) AS n FROM capture_bindings WHERE ${current} GROUP BY state`)
    const rejected = yield* countOf(sql`SELECT count(*) AS n FROM capture_rejections`)
    const refused = yield* countOf(sql`
      SELECT count(*) AS n FROM capture_bindings
      WHERE state = 'error' AND substr(last_error, 1, ${REFUSED_PREFIX.length}) = ${REFUSED_PREFIX} AND ${current}`)
    const newestError = yield* newestReason(sql`
      SELECT reason FROM (
        SELECT reason, rejected_at AS at, id AS seq FROM capture_rejections
        UNION ALL
        SELECT last_error AS reason, coalesce(checked_at, last_event_at) AS at, 0 AS seq FROM capture_bindings
        WHERE state = 'error' AND ${current}
      ) ORDER BY at DESC, seq DESC LIMIT 1`)
    const ofEvent = (event: string) => events.find((e) => e.event === event)?.n ?? 0
    const inState = (state: string) => bindings.find((b) => b.state === state)?.n ?? 0
    const lastEvent = events.reduce<string | null>(
      (last, e) => (e.last !== null && (last === null || e.last > last) ? e.last : last),
      null
    )
    return new CaptureStatus({
      events: {
        SessionStart: ofEvent("SessionStart"),
        UserPromptSubmit: ofEvent("UserPromptSubmit"),
        Stop: ofEvent("Stop"),
        SessionEnd: ofEvent("SessionEnd")
      },
      pending: inState("pending"),
      null_paths: inState("awaiting_path"),
      errors: rejected + inState("error"),
      refused,
      indexed_sessions: inState("indexed"),
      last_event_at: lastEvent,
      last_error: Option.match(newestError, { onNone: () => null, onSome: (row) => row.reason })
    })
  })
