import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, identity, Schema } from "effect"
import { agentClause, checkAgent } from "./agent-filter.js"
import { TranscriptSpan } from "./contract.js"
import {
  type ContextSessionLine,
  EXPORT_PAGE_TEXT_BUDGET,
  EXPORT_START,
  type ExportCursor,
  type ExportItem,
  type ExportPageRequest,
  ExportPageResponse,
  MessageLine,
  NoteRevisionLine
} from "./export-format.js"
import { invalidQuery } from "./invalid-query.js"
import { resolveRange, type TimeRange, TimeRangeError } from "./time-range.js"

const epochMs = "((julianday(m.timestamp) - 2440587.5) * 86400000.0)"

/** Rows as SQLite gives them; decoded into the lines of the format. */
const SessionRow = Schema.Struct({
  id: Schema.String,
  binding_key: Schema.String,
  project: Schema.NullOr(Schema.String),
  parent_session_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  depth: Schema.Int
})
const RevisionRow = Schema.Struct({
  note_id: Schema.String,
  revision: Schema.Int,
  update_id: Schema.String,
  session_id: Schema.String,
  kind: Schema.String,
  authorship: Schema.String,
  tags: Schema.parseJson(Schema.Array(Schema.String)),
  text: Schema.String,
  source_text: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  content_sha256: Schema.String
})
/** A message row: the export line's fields (read back as stored) with its span's columns. */
const MessageRow = Schema.Struct({
  ...MessageLine.omit("type", "source").fields,
  path: Schema.String,
  line: Schema.Int,
  byte_start: Schema.Int,
  byte_end: Schema.Int
})

/** Characters of text an item carries, for the page's budget. */
const textOf = (item: ExportItem) =>
  item.type === "note_revision"
    ? item.text.length + (item.source_text?.length ?? 0)
    : item.type === "message"
      ? item.text.length
      : 0

/**
 * One page of an export, keyset-paginated so memory stays bounded whatever the index holds and
 * a page never shifts: sessions by (depth, id), note revisions by (note_id, revision), transcript
 * messages by id. Each page comes from one phase; a phase that has no more rows answers with
 * the next phase's first cursor.
 *
 * What is exported (`range` and `agent`, checked by the caller):
 * - a note, with its whole history, when any of its revisions was written in the range and the
 *   agent filter keeps it (`agentClause`: notes stay unless their session belongs to another
 *   agent);
 * - the sessions of those revisions, and their ancestors, so parents arrive before children;
 * - transcript messages of that agent whose time is in the range (an unknown time never is,
 *   when the range is bounded).
 */
export const exportPage = (cursor: ExportCursor, limit: number, range: TimeRange, agent: string | null) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const inRange: Array<Statement.Fragment> = []
    if (range.sinceMs !== null) inRange.push(sql`${sql.literal(epochMs)} >= ${range.sinceMs}`)
    if (range.untilMs !== null) inRange.push(sql`${sql.literal(epochMs)} < ${range.untilMs}`)
    const noteWhere = [sql`m.note_id IS NOT NULL`, ...inRange]
    if (agent !== null) noteWhere.push(agentClause(sql, agent))
    const exportedNotes = sql`SELECT DISTINCT m.note_id FROM messages m WHERE ${sql.and(noteWhere)}`

    /**
     * A page of `rows` (each item with the cursor just after it). The text budget cuts a page
     * short, keeping at least one item; the cursor follows the cut. A full page continues after
     * its last row; a short one ends the phase (`next`).
     */
    const page = (
      rows: ReadonlyArray<{ readonly item: ExportItem; readonly after: ExportCursor }>,
      next: ExportCursor | null
    ) => {
      let chars = 0
      const kept: Array<{ readonly item: ExportItem; readonly after: ExportCursor }> = []
      for (const row of rows) {
        if (kept.length > 0 && chars + textOf(row.item) > EXPORT_PAGE_TEXT_BUDGET) break
        kept.push(row)
        chars += textOf(row.item)
      }
      const last = kept.at(-1)
      const continues = kept.length < rows.length || rows.length === limit
      return new ExportPageResponse({
        items: kept.map((r) => r.item),
        next_cursor: continues && last !== undefined ? last.after : next
      })
    }

    switch (cursor._tag) {
      case "sessions": {
        const rows = yield* sql`
          WITH RECURSIVE
            wanted(id) AS (
              SELECT u.session_id FROM authored_updates u WHERE u.note_id IN (${exportedNotes})
              UNION
              SELECT s.parent_session_id FROM context_sessions s JOIN wanted w ON s.id = w.id
              WHERE s.parent_session_id IS NOT NULL),
            depth(id, d) AS (
              SELECT id, 0 FROM context_sessions WHERE parent_session_id IS NULL
              UNION ALL
              SELECT s.id, depth.d + 1 FROM context_sessions s JOIN depth ON s.parent_session_id = depth.id)
          SELECT s.id, s.binding_key, s.project, s.parent_session_id, s.created_at, depth.d AS depth
          FROM context_sessions s JOIN depth ON depth.id = s.id
          WHERE s.id IN (SELECT id FROM wanted) AND (depth.d, s.id) > (${cursor.depth}, ${cursor.id})
          ORDER BY depth.d, s.id
          LIMIT ${limit}`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(SessionRow))))
        return page(
          rows.map((r) => ({
            item: identity<ContextSessionLine>({
              type: "context_session",
              id: r.id,
              binding_key: r.binding_key,
              project: r.project,
              parent_session_id: r.parent_session_id,
              created_at: r.created_at
            }),
            after: { _tag: "sessions", depth: r.depth, id: r.id }
          })),
          { _tag: "notes", note_id: "", revision: 0 }
        )
      }
      case "notes": {
        const rows = yield* sql`
          SELECT u.note_id, u.revision, u.update_id, u.session_id, u.kind, u.authorship, u.tags, m.text,
                 u.source_text, u.created_at, u.content_sha256
          FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
          WHERE u.note_id IN (${exportedNotes}) AND (u.note_id, u.revision) > (${cursor.note_id}, ${cursor.revision})
          ORDER BY u.note_id, u.revision
          LIMIT ${limit}`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(RevisionRow))))
        const items = yield* Effect.forEach(rows, (r) =>
          Schema.decodeUnknown(NoteRevisionLine)({ type: "note_revision", ...r }).pipe(
            Effect.map((item) => ({
              item,
              after: { _tag: "notes", note_id: r.note_id, revision: r.revision } as const
            }))
          )
        )
        return page(items, { _tag: "messages", id: 0 })
      }
      case "messages": {
        const where = [sql`m.source_file_id IS NOT NULL`, sql`m.id > ${cursor.id}`, ...inRange]
        if (agent !== null) where.push(sql`m.agent = ${agent}`)
        const rows = yield* sql`
          SELECT m.id, m.source_type, m.agent, m.session_id, m.turn_number, m.turn_id, m.role, m.kind, m.phase,
                 m.text, m.cwd, m.timestamp, f.path, m.line, m.byte_start, m.byte_end
          FROM messages m JOIN source_files f ON f.id = m.source_file_id
          WHERE ${sql.and(where)}
          ORDER BY m.id
          LIMIT ${limit}`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(MessageRow))))
        const items = rows.map((r) => ({
          after: { _tag: "messages", id: r.id } as const,
          item: identity<MessageLine>({
            type: "message",
            id: r.id,
            source_type: r.source_type,
            agent: r.agent,
            session_id: r.session_id,
            turn_number: r.turn_number,
            turn_id: r.turn_id,
            role: r.role,
            kind: r.kind,
            phase: r.phase,
            text: r.text,
            cwd: r.cwd,
            timestamp: r.timestamp,
            source: new TranscriptSpan({
              agent: r.agent ?? "",
              path: r.path,
              line: r.line,
              byte_start: r.byte_start,
              byte_end: r.byte_end
            })
          })
        }))
        return page(items, null)
      }
    }
  })

/**
 * An export page as a reader answers it: the filters checked (an unknown agent, an unreadable
 * date or an empty range are `InvalidQuery`, worded as for search), the range resolved on the
 * Effect clock, then `exportPage`.
 */
export const readExportPage = (request: ExportPageRequest) =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const range = resolveRange({ since: request.filters.since, until: request.filters.until, nowMs })
    if (range instanceof TimeRangeError) return yield* invalidQuery(range)
    const agent = yield* checkAgent(request.filters.agent).pipe(Effect.mapError(invalidQuery))
    return yield* exportPage(request.cursor ?? EXPORT_START, request.limit, range, agent ?? null)
  })
