import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { agentChoices } from "../domain/agent-choices.js"
import { redactSecrets } from "../redaction/redact.js"
import { agentClause, checkAgent, MESSAGE_AGENT } from "./agent-filter.js"
import { CURRENT_REVISION } from "./current-revision.js"
import { invalidQuery } from "./invalid-query.js"
import { listedFields, RecentRequest } from "./recent.js"
import { resolveRange, TimeRangeError } from "./time-range.js"

/** Sessions with activity in a range: the same filters and bounds as recent (`RECENT_BOUNDS`). */
export const SessionsRequest = Schema.Struct({
  ...RecentRequest.fields,
  ...listedFields("sessions", `Only sessions of this agent: ${agentChoices({ glossed: true })}. Default: every agent.`)
})
export type SessionsRequest = typeof SessionsRequest.Type

export class SessionSummary extends Schema.Class<SessionSummary>("SessionSummary")({
  session_id: Schema.String,
  /** The agent whose transcript (or whose hook binding, for notes) it is; null when unknown. */
  agent: Schema.NullOr(Schema.String),
  project: Schema.NullOr(Schema.String),
  first_activity: Schema.NullOr(Schema.String),
  last_activity: Schema.NullOr(Schema.String),
  /** Transcript turns, each note counting as one. */
  turns: Schema.Int,
  messages: Schema.Int
}) {}

export class SessionsResponse extends Schema.Class<SessionsResponse>("SessionsResponse")({
  since: Schema.NullOr(Schema.String),
  until: Schema.NullOr(Schema.String),
  project: Schema.NullOr(Schema.String),
  /** The agent filter, as asked; null for every agent. */
  agent: Schema.NullOr(Schema.String),
  sessions: Schema.Array(SessionSummary),
  offset: Schema.Int,
  limit: Schema.Int,
  next_offset: Schema.NullOr(Schema.Int)
}) {}

const SessionRow = Schema.Struct({
  session_id: Schema.String,
  agent: Schema.NullOr(Schema.String),
  project: Schema.NullOr(Schema.String),
  first_ms: Schema.NullOr(Schema.Number),
  last_ms: Schema.NullOr(Schema.Number),
  turns: Schema.Int,
  messages: Schema.Int
})

const epochMs = "((julianday(m.timestamp) - 2440587.5) * 86400000.0)"

const iso = (ms: number | null) => (ms === null ? null : new Date(Math.round(ms)).toISOString())

/**
 * Sessions with message activity in the request's range, newest activity first: a session
 * matches when any of its messages does, as a turn does for recent. A note is its current
 * revision, one turn of its blctx session.
 */
export const listSessions = (request: SessionsRequest) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const nowMs = yield* Clock.currentTimeMillis
    const range = resolveRange({ days: request.days, since: request.since, until: request.until, nowMs })
    if (range instanceof TimeRangeError) return yield* invalidQuery(range)
    const agent = yield* checkAgent(request.agent).pipe(Effect.mapError(invalidQuery))
    const where = [sql`m.session_id IS NOT NULL`, sql`${sql.literal(CURRENT_REVISION)}`]
    if (range.sinceMs !== null) where.push(sql`${sql.literal(epochMs)} >= ${range.sinceMs}`)
    if (range.untilMs !== null) where.push(sql`${sql.literal(epochMs)} < ${range.untilMs}`)
    if (request.project !== undefined) {
      // Stored cwds are redacted, and redaction is deterministic: compare like with like.
      const p = redactSecrets(request.project.replace(/\/+$/, "")).text
      where.push(sql`(m.cwd = ${p} OR substr(m.cwd, 1, ${p.length + 1}) = ${`${p}/`})`)
    }
    if (agent !== undefined) where.push(agentClause(sql, agent))
    const rows = yield* SqlSchema.findAll({
      Request: Schema.Void,
      Result: SessionRow,
      execute: () => sql`
        SELECT m.session_id, max(${sql.literal(MESSAGE_AGENT)}) AS agent, max(m.cwd) AS project,
               min(${sql.literal(epochMs)}) AS first_ms, max(${sql.literal(epochMs)}) AS last_ms,
               count(DISTINCT CASE WHEN m.note_id IS NULL THEN m.source_file_id || ':' || m.turn_number
                                   ELSE 'note:' || m.note_id END) AS turns,
               count(*) AS messages
        FROM messages m
        WHERE ${sql.and(where)}
        GROUP BY m.session_id
        ORDER BY last_ms IS NULL, last_ms DESC, m.session_id
        LIMIT ${request.limit + 1} OFFSET ${request.offset}`
    })(undefined)
    return new SessionsResponse({
      since: iso(range.sinceMs),
      until: iso(range.untilMs),
      project: request.project ?? null,
      agent: agent ?? null,
      sessions: rows.slice(0, request.limit).map(
        (r) =>
          new SessionSummary({
            session_id: r.session_id,
            agent: r.agent,
            project: r.project,
            first_activity: iso(r.first_ms),
            last_activity: iso(r.last_ms),
            turns: r.turns,
            messages: r.messages
          })
      ),
      offset: request.offset,
      limit: request.limit,
      next_offset: rows.length > request.limit ? request.offset + request.limit : null
    })
  })
