import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import type { NumberBound } from "../domain/read-bounds.js"
import { boundedWithFallback } from "../domain/read-bounds-schema.js"
import { rowsOf } from "../sql/sql-rows.js"
import { dayIn, offsetAt, plusDays, startOf } from "./time-phrases.js"

/**
 * The index's health over time, for the viewer's health page: messages, chunks and active
 * sessions per day in the daemon's zone, and the files the importer skipped with their reasons.
 * Pending vectors and capture counts are `ContextStatus`'s, not repeated here.
 */

export const INDEX_ACTIVITY_BOUNDS = {
  /** Calendar days ending today, in the daemon's zone: up to a (leap) year. */
  days: { min: 1, max: 366, fallback: 90 }
} as const satisfies Record<string, NumberBound>

/** How many skipped files are named, the newest first (all are counted). */
export const SKIPPED_LISTED = 100

export const IndexActivityRequest = Schema.Struct({
  days: boundedWithFallback(
    INDEX_ACTIVITY_BOUNDS.days,
    `How many calendar days to count, ending today in the daemon's time zone (${INDEX_ACTIVITY_BOUNDS.days.min} to ${INDEX_ACTIVITY_BOUNDS.days.max}).`
  )
})
export type IndexActivityRequest = typeof IndexActivityRequest.Type

export const DayActivity = Schema.Struct({
  /** The calendar day in the daemon's zone, `YYYY-MM-DD`. */
  day: Schema.String,
  /** Messages with a timestamp on that day (every stored row, as `coverage` counts them). */
  messages: Schema.Int,
  /** The chunks of those messages. */
  chunks: Schema.Int,
  /** Sessions with at least one of those messages. */
  sessions: Schema.Int
})
export type DayActivity = typeof DayActivity.Type

export const SkippedFile = Schema.Struct({
  path: Schema.String,
  /** The agent whose transcript it is, when the index holds messages of it; null otherwise. */
  agent: Schema.NullOr(Schema.String),
  reason: Schema.String,
  /** When it was skipped (ISO 8601 UTC). */
  at: Schema.String
})
export type SkippedFile = typeof SkippedFile.Type

export class IndexActivityResponse extends Schema.Class<IndexActivityResponse>("IndexActivityResponse")({
  /** Days with activity, the oldest first; days without any are left out. */
  days: Schema.Array(DayActivity),
  /** The newest skipped files, one entry per path (its latest reason). */
  skipped_files: Schema.Array(SkippedFile),
  /** How many distinct files are recorded as skipped. */
  skipped_total: Schema.Int
}) {}

/** A span of time over which the zone keeps one UTC offset. */
interface OffsetSpan {
  readonly from: number
  readonly until: number
  readonly offset: number
}

const MINUTE = 60_000

/** The first minute in `(low, high]` at which `timeZone`'s offset is no longer the one at `low`. */
const offsetChange = (low: number, high: number, timeZone: string) => {
  const before = offsetAt(low, timeZone)
  let lo = low
  let hi = high
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE
    if (offsetAt(mid, timeZone) === before) lo = mid
    else hi = mid
  }
  return hi
}

/**
 * `[from, until)` cut where the zone's offset changes (DST): looked at each day start, each
 * change then found to the minute. A few spans for a year, so SQL maps a time to its local day
 * with one CASE instead of asking the zone per message.
 */
export const offsetSpans = (from: number, until: number, timeZone: string): ReadonlyArray<OffsetSpan> => {
  const spans: Array<OffsetSpan> = []
  let start = from
  let offset = offsetAt(from, timeZone)
  for (let at = from; at < until; ) {
    const next = Math.min(at + 86_400_000, until)
    const nextOffset = offsetAt(next, timeZone)
    if (nextOffset !== offset) {
      const edge = offsetChange(at, next, timeZone)
      spans.push({ from: start, until: edge, offset })
      start = edge
      offset = offsetAt(edge, timeZone)
    }
    at = next
  }
  spans.push({ from: start, until, offset })
  return spans
}

/** The requested days as an instant range: from the first day's midnight to tomorrow's, in the zone. */
export const dayRange = (days: number, nowMs: number, timeZone: string) => {
  const today = dayIn(nowMs, timeZone)
  return {
    sinceMs: startOf(plusDays(today, 1 - days), timeZone),
    untilMs: startOf(plusDays(today, 1), timeZone)
  }
}

/**
 * A message's time as whole epoch milliseconds (timestamps are stored as their transcripts wrote
 * them), so span edges compare exactly.
 */
const EPOCH_MS = "CAST(round((julianday(m.timestamp) - 2440587.5) * 86400000.0) AS INTEGER)"

/** The local day number (days since 1970-01-01 in the zone) of `ms`: its span's offset added (spans are our own integers). */
const localDay = (spans: ReadonlyArray<OffsetSpan>) => {
  const last = spans[spans.length - 1]?.offset ?? 0
  const cases = spans.slice(0, -1).map((s) => `WHEN ms < ${s.until} THEN ${s.offset}`)
  const offset = cases.length === 0 ? `${last}` : `CASE ${cases.join(" ")} ELSE ${last} END`
  return `((ms + ${offset}) / 86400000)`
}

/**
 * A text range that holds every stored timestamp of `[sinceMs, untilMs)`, two days wider on each
 * side (an offset of up to 14 hours moves a written time's date by one): the time index narrows
 * the rows by it, and the exact comparison of instants decides.
 */
const coarseRange = (sinceMs: number, untilMs: number) => ({
  from: new Date(sinceMs - 2 * 86_400_000).toISOString().slice(0, 10),
  to: new Date(untilMs + 2 * 86_400_000).toISOString().slice(0, 10)
})

const DayRow = Schema.Struct({ day_number: Schema.Int, messages: Schema.Int, chunks: Schema.Int, sessions: Schema.Int })
const dayRows = rowsOf(DayRow)

/** `YYYY-MM-DD` of a day number (days since 1970-01-01). */
const dayOf = (dayNumber: number) => new Date(dayNumber * 86_400_000).toISOString().slice(0, 10)

/** Messages, chunks and sessions per local day in `[sinceMs, untilMs)`, days without any left out. */
const activityByDay = (range: { sinceMs: number; untilMs: number }, timeZone: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const spans = offsetSpans(range.sinceMs, range.untilMs, timeZone)
    const coarse = coarseRange(range.sinceMs, range.untilMs)
    const rows = yield* dayRows(sql`
      WITH timed AS (
        SELECT m.id, m.session_id, ${sql.literal(EPOCH_MS)} AS ms FROM messages m
        WHERE m.timestamp >= ${coarse.from} AND m.timestamp < ${coarse.to})
      SELECT ${sql.literal(localDay(spans))} AS day_number,
             count(*) AS messages,
             coalesce(sum((SELECT count(*) FROM chunks c WHERE c.message_id = timed.id)), 0) AS chunks,
             count(DISTINCT session_id) AS sessions
      FROM timed WHERE ms >= ${range.sinceMs} AND ms < ${range.untilMs}
      GROUP BY day_number ORDER BY day_number`)
    return rows.map(
      (r): DayActivity => ({ day: dayOf(r.day_number), messages: r.messages, chunks: r.chunks, sessions: r.sessions })
    )
  })

/**
 * Every durable record of a file the importer did not store, one row per record: files skipped
 * after repeated interruptions (`import_retries`, retried by the daemon), files refused because
 * another file claims their session (`source_files` conflicts), and the files import jobs named
 * as not imported (unreadable, refused, changed while read, missing: the first few of each job,
 * in its checkpoint). A named file is left out once it was stored after that job started (a file
 * read with some unreadable lines is named too, but imported), or a later finished import took
 * it without naming it again. Only jobs that did not complete can name a skipped file (each
 * skip makes the job partial), so completed jobs, the most, are not read: the state index finds
 * the others without stepping over each row's params (stored before its state and checkpoint).
 */
const SKIP_RECORDS = `
  WITH import_jobs AS (
    SELECT seq, checkpoint, coalesce(started_at, submitted_at) AS started, coalesce(finished_at, updated_at) AS at
    FROM jobs WHERE state IN ('partial', 'failed', 'cancelled', 'superseded', 'running') AND kind = 'import'
      AND checkpoint IS NOT NULL AND json_valid(checkpoint)),
  named AS (
    SELECT j.seq, j.started, j.at,
           json_extract(p.value, '$.path') AS path, json_extract(p.value, '$.problem') AS reason
    FROM import_jobs j, json_each(j.checkpoint, '$.problems') p),
  latest_named AS MATERIALIZED (
    SELECT path, reason, at, started, seq, row_number() OVER (PARTITION BY path ORDER BY seq DESC) AS n FROM named),
  taken_later AS MATERIALIZED (
    SELECT q.value AS path, max(k.seq) AS seq FROM jobs k, json_each(k.params, '$.paths') q
    WHERE k.kind = 'import' AND k.state IN ('completed', 'partial') AND json_valid(k.params)
      AND k.seq > (SELECT coalesce(min(seq), 9e18) FROM latest_named WHERE n = 1)
      AND q.value IN (SELECT path FROM latest_named WHERE n = 1)
    GROUP BY q.value),
  records AS (
    SELECT path, reason, skipped_at AS at FROM import_retries
    UNION ALL
    SELECT path, coalesce(note, 'another file claims the same session'), imported_at FROM source_files
    WHERE state = 'conflict'
    UNION ALL
    SELECT l.path, l.reason, l.at FROM latest_named l
    WHERE l.n = 1 AND l.path IS NOT NULL AND l.reason IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM taken_later t WHERE t.path = l.path AND t.seq > l.seq)
      AND NOT EXISTS (SELECT 1 FROM source_files f WHERE f.path = l.path AND f.imported_at >= l.started)),
  newest AS (
    SELECT path, reason, at, row_number() OVER (PARTITION BY path ORDER BY at DESC) AS n FROM records)`

const SkippedRow = Schema.Struct({ ...SkippedFile.fields, total: Schema.Int })
const skippedRows = rowsOf(SkippedRow)

/** The newest `limit` skipped files (the latest record of each path) and how many there are, in one pass. */
const skippedFiles = (limit: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* skippedRows(sql`${sql.literal(SKIP_RECORDS)}
      SELECT s.path, s.reason, s.at, count(*) OVER () AS total,
             coalesce(
               (SELECT m.agent FROM source_files f JOIN messages m ON m.source_file_id = f.id
                WHERE f.path = s.path AND m.agent IS NOT NULL LIMIT 1),
               -- A conflicting file's session is stored from the file that claimed it first.
               (SELECT m.agent FROM source_files f JOIN messages m ON m.session_id = f.session_id
                WHERE f.path = s.path AND f.session_id IS NOT NULL AND m.agent IS NOT NULL LIMIT 1)) AS agent
      FROM newest s WHERE s.n = 1 ORDER BY s.at DESC, s.path LIMIT ${limit}`)
    return {
      listed: rows.map(({ total: _, ...file }): SkippedFile => file),
      total: rows[0]?.total ?? 0
    }
  })

/** `IndexActivity`: the days of the request in `timeZone` (the daemon's), and the skipped files. */
export const indexActivity = (request: IndexActivityRequest, timeZone: string) =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const days = yield* activityByDay(dayRange(request.days, nowMs, timeZone), timeZone)
    const skipped = yield* skippedFiles(SKIPPED_LISTED)
    return new IndexActivityResponse({ days, skipped_files: skipped.listed, skipped_total: skipped.total })
  })
