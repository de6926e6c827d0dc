import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { agentChoices } from "../domain/agent-choices.js"
import { messageContextId } from "../domain/context-id.js"
import { described } from "../domain/field-description.js"
import { RECENT_BOUNDS, rangeWords } from "../domain/read-bounds.js"
import { boundedNumber, boundedWithFallback } from "../domain/read-bounds-schema.js"
import { redactSecrets } from "../redaction/redact.js"
import { countOf, rowsOf } from "../sql/sql-rows.js"
import { AgentFilter, agentClause, MESSAGE_AGENT } from "./agent-filter.js"
import {
  ProjectField,
  ResultAgent,
  SinceField,
  SourceLocation,
  SourceType,
  sourceLocationOf,
  UntilField
} from "./contract.js"
import { CURRENT_REVISION } from "./current-revision.js"
import { ProvenanceColumns } from "./provenance-row.js"
import { applyTextBudget } from "./text-budget.js"
import type { TimeRange } from "./time-range.js"

/** Each turn previews at most this many of its searchable messages. */
export const TURN_PREVIEW_MESSAGES = 20

export class TurnMessage extends Schema.Class<TurnMessage>("TurnMessage")({
  context_id: Schema.String,
  role: Schema.String,
  kind: Schema.String,
  timestamp: Schema.NullOr(Schema.String),
  text: Schema.String,
  text_truncated: Schema.Boolean,
  source_type: SourceType,
  agent: ResultAgent,
  source: SourceLocation
}) {}

export class RecentTurn extends Schema.Class<RecentTurn>("RecentTurn")({
  session_id: Schema.NullOr(Schema.String),
  turn_id: Schema.NullOr(Schema.String),
  turn_number: Schema.Int,
  project: Schema.NullOr(Schema.String),
  first_activity: Schema.NullOr(Schema.String),
  last_activity: Schema.NullOr(Schema.String),
  message_count: Schema.Int,
  messages: Schema.Array(TurnMessage),
  /** Messages of the turn not previewed (over the 20-message preview or the text budget). */
  messages_not_shown: Schema.Int
}) {}

/**
 * The fields recent's kind of read words by what it lists (`turns`, `sessions`): a day count and
 * a page, within `RECENT_BOUNDS`, and an agent filter described by the read.
 */
export const listedFields = (items: string, agent: string) => ({
  days: Schema.optional(
    boundedNumber(
      RECENT_BOUNDS.days,
      `Only ${items} active in the last N days, up to ${RECENT_BOUNDS.days.max} (fractions such as 0.5 work). Not with \`since\`.`
    )
  ),
  agent: Schema.optional(described(AgentFilter, agent)),
  limit: boundedWithFallback(RECENT_BOUNDS.limit, `How many ${items} to return, ${rangeWords(RECENT_BOUNDS.limit)}.`),
  offset: boundedWithFallback(
    RECENT_BOUNDS.offset,
    `Skip this many ${items} first, to get the next page (an answer's next_offset says where it continues).`
  )
})

const turns = listedFields(
  "turns",
  `Only turns of this agent: ${agentChoices({ glossed: true })}. Notes written for blctx stay unless their session belongs to another agent. Default: every agent.`
)

/** Recent activity: a day count or a `[since, until)` range, optionally one project and one agent. */
export const RecentRequest = Schema.Struct({
  days: turns.days,
  since: Schema.optional(SinceField),
  until: Schema.optional(UntilField),
  project: Schema.optional(ProjectField),
  agent: turns.agent,
  limit: turns.limit,
  offset: turns.offset
})
export type RecentRequest = typeof RecentRequest.Type

export class RecentResponse extends Schema.Class<RecentResponse>("RecentResponse")({
  since: Schema.NullOr(Schema.String),
  until: Schema.NullOr(Schema.String),
  project: Schema.NullOr(Schema.String),
  /** The agent filter, as asked; null for every agent. */
  agent: Schema.NullOr(Schema.String),
  turns: Schema.Array(RecentTurn),
  offset: Schema.Int,
  limit: Schema.Int,
  next_offset: Schema.NullOr(Schema.Int),
  truncated: Schema.Boolean,
  returned_chars: Schema.Int,
  /** Messages whose time is unknown: they never match a date range. */
  unknown_timestamps: Schema.Int
}) {}

const epochMs = "((julianday(m.timestamp) - 2440587.5) * 86400000.0)"

const TurnRow = Schema.Struct({
  /** A transcript turn's file; null for a note. */
  source_file_id: Schema.NullOr(Schema.Number),
  /** A note's id; null for a transcript turn. */
  note_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  turn_number: Schema.Number,
  turn_id: Schema.NullOr(Schema.String),
  cwd: Schema.NullOr(Schema.String),
  first_ms: Schema.NullOr(Schema.Number),
  last_ms: Schema.NullOr(Schema.Number),
  message_count: Schema.Number
})
type TurnRow = typeof TurnRow.Type
const turnRows = rowsOf(TurnRow)

const MessageRow = Schema.Struct({
  id: Schema.Number,
  role: Schema.String,
  kind: Schema.String,
  timestamp: Schema.NullOr(Schema.String),
  text: Schema.String,
  source_type: Schema.String,
  ...ProvenanceColumns
})
type MessageRow = typeof MessageRow.Type
const messageRows = rowsOf(MessageRow)

const iso = (ms: number | null) => (ms === null ? null : new Date(Math.round(ms)).toISOString())

/**
 * Turns with message activity in `[since, until)`, newest activity first. A turn matches when
 * any of its messages does; messages without a time never match a bounded range. `agent` (a
 * known agent, checked by the caller) keeps that agent's transcript turns and the notes
 * `agentClause` keeps; null keeps every agent's.
 */
export const recentTurns = (
  range: TimeRange,
  project: string | null,
  limit: number,
  offset: number,
  agent: string | null = null
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // A transcript's turns, whichever agent wrote them, and notes: each note (its current revision)
    // is a one-message entry of its blctx session, so a note is seen here as soon as it is saved.
    const where = [sql`1 = 1`]
    if (range.sinceMs !== null) where.push(sql`${sql.literal(epochMs)} >= ${range.sinceMs}`)
    if (range.untilMs !== null) where.push(sql`${sql.literal(epochMs)} < ${range.untilMs}`)
    if (project !== null) {
      // Stored cwds are redacted, and redaction is deterministic: compare like with like.
      const p = redactSecrets(project.replace(/\/+$/, "")).text
      where.push(sql`(m.cwd = ${p} OR substr(m.cwd, 1, ${p.length + 1}) = ${`${p}/`})`)
    }
    if (agent !== null) where.push(agentClause(sql, agent))
    // A note is its current revision: older revisions' messages are history, never recent activity.
    where.push(sql`${sql.literal(CURRENT_REVISION)}`)
    const turns = yield* turnRows(sql`
      SELECT m.source_file_id, m.note_id, max(m.session_id) AS session_id, m.turn_number, max(m.turn_id) AS turn_id,
             max(m.cwd) AS cwd, min(${sql.literal(epochMs)}) AS first_ms, max(${sql.literal(epochMs)}) AS last_ms,
             count(*) AS message_count
      FROM messages m
      WHERE ${sql.and(where)}
      GROUP BY m.source_file_id, m.turn_number, m.note_id
      ORDER BY last_ms IS NULL, last_ms DESC, m.source_file_id, m.turn_number, m.note_id
      LIMIT ${limit + 1} OFFSET ${offset}`)
    const unknown = yield* countOf(sql`SELECT count(*) AS n FROM messages WHERE julianday(timestamp) IS NULL`)

    const previews: Array<{ turn: TurnRow; messages: ReadonlyArray<MessageRow>; total: number }> = []
    for (const turn of turns.slice(0, limit)) {
      const group =
        turn.source_file_id === null
          ? sql`m.source_file_id IS NULL AND m.note_id = ${turn.note_id} AND ${sql.literal(CURRENT_REVISION)}`
          : sql`m.source_file_id = ${turn.source_file_id} AND m.turn_number = ${turn.turn_number}`
      const messages = yield* messageRows(sql`
        SELECT m.id, m.role, m.kind, m.timestamp, m.text, m.source_type,
               ${sql.literal(MESSAGE_AGENT)} AS agent, f.path, m.line, m.byte_start, m.byte_end, m.note_id, m.note_revision
        FROM messages m LEFT JOIN source_files f ON f.id = m.source_file_id
        WHERE ${group}
        ORDER BY m.line, m.note_revision
        LIMIT ${TURN_PREVIEW_MESSAGES}`)
      const total = yield* countOf(sql`SELECT count(*) AS n FROM messages m WHERE ${group}`)
      previews.push({ turn, messages, total })
    }

    // The text budget runs over every previewed message, in order.
    const flat = previews.flatMap((p, turnIndex) => p.messages.map((m) => ({ turnIndex, m, text: m.text, cut: false })))
    const budgeted = applyTextBudget(
      flat,
      (x) => x.text,
      (x, text) => ({ ...x, text, cut: true })
    )
    const shown = previews.map((p, turnIndex) => {
      const messages = budgeted.items
        .filter((x) => x.turnIndex === turnIndex)
        .map(
          (x) =>
            new TurnMessage({
              context_id: messageContextId(x.m.id),
              role: x.m.role,
              kind: x.m.kind,
              timestamp: x.m.timestamp,
              text: x.text,
              text_truncated: x.cut,
              source_type: x.m.source_type,
              agent: x.m.agent,
              source: sourceLocationOf(x.m)
            })
        )
      return new RecentTurn({
        session_id: p.turn.session_id,
        turn_id: p.turn.turn_id,
        turn_number: p.turn.turn_number,
        project: p.turn.cwd,
        first_activity: iso(p.turn.first_ms),
        last_activity: iso(p.turn.last_ms),
        message_count: p.total,
        messages,
        messages_not_shown: p.total - messages.length
      })
    })
    return new RecentResponse({
      since: iso(range.sinceMs),
      until: iso(range.untilMs),
      project,
      agent,
      turns: shown,
      offset,
      limit,
      next_offset: turns.length > limit ? offset + limit : null,
      truncated: budgeted.truncated,
      returned_chars: budgeted.returnedChars,
      unknown_timestamps: unknown
    })
  })
