import { createHash } from "node:crypto"
import { type SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { messageContextId } from "../domain/context-id.js"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import { redactSecrets } from "../redaction/redact.js"
import { sourceLocationOf } from "../retrieval/contract.js"
import { filterClauses } from "../retrieval/lexical-search.js"
import { ProvenanceColumns } from "../retrieval/provenance-row.js"
import { resolveRange, TimeRangeError } from "../retrieval/time-range.js"
import {
  FORGET_EXCERPT_CHARS,
  FORGET_PREVIEW_ITEMS,
  ForgetCounts,
  ForgetItem,
  type ForgetSelector,
  InvalidForgetSelector,
  SourceCounts,
  selectorKind
} from "./forget-contract.js"

/** A byte range of a transcript whose messages are forgotten: the importer never stores inside it again. */
export interface ForgottenSpan {
  readonly source_file_id: number
  readonly byte_start: number
  readonly byte_end: number
}

/**
 * Everything one forget removes, resolved from the selector: computed for the preview, and again
 * inside the confirming transaction, where its digest must equal the preview's (the token binds it).
 */
export interface ForgetPlan {
  readonly messageIds: ReadonlyArray<number>
  readonly chunkIds: ReadonlyArray<number>
  /** Chunks that have a vector of some fingerprint. */
  readonly vectorChunkIds: ReadonlyArray<number>
  readonly noteIds: ReadonlyArray<string>
  /** Transcript `sessions` rows left without any message. */
  readonly sessionIds: ReadonlyArray<string>
  /** blctx sessions (context_session selector) removed with their notes. */
  readonly contextSessionIds: ReadonlyArray<string>
  readonly bindingKeys: ReadonlyArray<string>
  /** Capture events removed on their own (a time range); a removed binding's events cascade. */
  readonly eventIds: ReadonlyArray<number>
  readonly spans: ReadonlyArray<ForgottenSpan>
  readonly counts: ForgetCounts
  readonly items: ReadonlyArray<ForgetItem>
  /** SHA-256 of every id above, sorted: what a token confirms. */
  readonly digest: string
}

/** A message the selector reaches, with what counting and spans need of it. */
const SelectedRow = Schema.Struct({
  id: Schema.Number,
  source_type: Schema.String,
  source_file_id: Schema.NullOr(Schema.Number),
  session_id: Schema.NullOr(Schema.String),
  note_id: Schema.NullOr(Schema.String)
})
type SelectedRow = typeof SelectedRow.Type

const Count = Schema.Struct({ n: Schema.Number })
const NumberId = Schema.Struct({ id: Schema.Number })
const StringId = Schema.Struct({ id: Schema.String })
const TypedCount = Schema.Struct({ source_type: Schema.String, n: Schema.Number })
const ChunkRow = Schema.Struct({
  id: Schema.Number,
  vector_fingerprint: Schema.NullOr(Schema.String),
  source_type: Schema.String
})
const TypedMessage = Schema.Struct({ id: Schema.Number, source_type: Schema.String })
const BindingRow = Schema.Struct({ binding_key: Schema.String })
const SpanRow = Schema.Struct({ id: Schema.Number, byte_start: Schema.Number, byte_end: Schema.Number })
const IndexedBytes = Schema.Struct({ indexed_bytes: Schema.Number })
const ItemRow = Schema.Struct({
  id: Schema.Number,
  source_type: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  excerpt: Schema.String,
  ...ProvenanceColumns
})

/** The rows of `statement`, each decoded as `row` (a row of another shape fails as a ParseError). */
const rowsOf = <A, I, E, R>(row: Schema.Schema<A, I>, statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
  SqlSchema.findAll({ Request: Schema.Void, Result: row, execute: () => statement })(undefined)

const invalid = (message: string) =>
  new InvalidForgetSelector({
    message,
    remediation:
      "Give dates as YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], optionally with Z or ±HH:MM (no offset means UTC), with until after since."
  })

/** Stored cwds are redacted, and redaction is deterministic: a project compares like with like. */
const normalizedProject = (project: string) => redactSecrets(project.replace(/\/+$/, "")).text || "/"

/** Milliseconds since the epoch of an ISO timestamp column, as retrieval compares times. */
const epochMs = (column: string) => `((julianday(${column}) - 2440587.5) * 86400000.0)`

/** The messages the selector names directly (notes are widened to every revision afterwards). */
const matchClause = (sql: SqlClient.SqlClient, selector: ForgetSelector) =>
  Effect.gen(function* () {
    const kind = selectorKind(selector)
    switch (kind) {
      case "note":
        return sql`m.note_id = ${selector.note ?? ""}`
      case "context_session":
        return sql`m.source_type = ${AUTHORED_UPDATE} AND m.session_id = ${selector.context_session ?? ""}`
      case "file":
        return sql`m.source_file_id = (SELECT id FROM source_files WHERE path = ${selector.file ?? ""})`
      case "session":
        return sql`m.source_file_id IS NOT NULL AND m.session_id = ${selector.session ?? ""}`
      case "project":
      case "time_range": {
        if (kind === "time_range") {
          const range = resolveRange({ since: selector.since, until: selector.until, nowMs: 0 })
          if (range instanceof TimeRangeError) return yield* invalid(`${range.input}: ${range.message}`)
        }
        const filters =
          kind === "project"
            ? { project: normalizedProject(selector.project ?? "/") }
            : {
                ...(selector.since === undefined ? {} : { since: selector.since }),
                ...(selector.until === undefined ? {} : { until: selector.until })
              }
        const clauses = yield* filterClauses(sql, filters).pipe(
          Effect.catchTags({
            TimeRangeError: (e) => invalid(`${e.input}: ${e.message}`),
            UnknownAgent: (e) => invalid(`unknown agent ${e.agent}`)
          })
        )
        return sql.and(clauses)
      }
      default:
        return yield* invalid(
          "name exactly one of note, context_session, file, session, project, or a time range (since and/or until)"
        )
    }
  })

const sortedDigest = (parts: Record<string, ReadonlyArray<string | number>>) => {
  const hash = createHash("sha256")
  for (const [name, values] of Object.entries(parts)) {
    const sorted = [...values].map(String).sort()
    hash.update(`${name}:${sorted.length}:${sorted.join(",")}\n`)
  }
  return hash.digest("hex")
}

const emptyCounts = () => ({
  messages: 0,
  chunks: 0,
  vectors: 0,
  notes: 0,
  note_revisions: 0,
  sessions: 0,
  files: 0
})
type MutableCounts = ReturnType<typeof emptyCounts>

/** SQLite's limit on bound parameters is far above this; batches keep statements small. */
const BATCH = 500

const inBatches = <A, B, E, R>(
  values: ReadonlyArray<A>,
  run: (batch: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E, R>
) =>
  Effect.gen(function* () {
    const out: Array<B> = []
    for (let i = 0; i < values.length; i += BATCH) out.push(...(yield* run(values.slice(i, i + BATCH))))
    return out
  })

/** Per source type, what a forget removes; `of` makes a type's counts on first use. */
const makeTally = () => {
  const counts = new Map<string, MutableCounts>()
  const of = (sourceType: string) => {
    let c = counts.get(sourceType)
    if (c === undefined) {
      c = emptyCounts()
      counts.set(sourceType, c)
    }
    return c
  }
  const bySource = () =>
    Object.fromEntries(
      [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, new SourceCounts(v)])
    )
  return { of, bySource }
}
type Tally = ReturnType<typeof makeTally>

const ascending = (a: number, b: number) => a - b

/** The messages the selector matches, widened to every revision of a note any of them belongs to. */
const selectMessages = (sql: SqlClient.SqlClient, selector: ForgetSelector) =>
  Effect.gen(function* () {
    const where = yield* matchClause(sql, selector)
    const matched = yield* rowsOf(
      SelectedRow,
      sql`SELECT m.id, m.source_type, m.source_file_id, m.session_id, m.note_id FROM messages m WHERE ${where}`
    )
    // Notes are forgotten whole: every revision of a note any matched revision belongs to.
    const noteIds = [...new Set(matched.flatMap((m) => (m.note_id === null ? [] : [m.note_id])))].sort()
    const revisions = yield* inBatches(noteIds, (batch) =>
      rowsOf(
        SelectedRow,
        sql`SELECT id, source_type, source_file_id, session_id, note_id FROM messages WHERE note_id IN ${sql.in(batch)}`
      )
    )
    const byId = new Map<number, SelectedRow>()
    for (const row of [...matched, ...revisions]) byId.set(row.id, row)
    return { byId, noteIds }
  })

/** Counts the messages, note revisions and files by source type. */
const countMessages = (rows: Iterable<SelectedRow>, tally: Tally) => {
  const files = new Map<string, Set<number>>()
  for (const row of rows) {
    const c = tally.of(row.source_type)
    c.messages++
    if (row.note_id !== null) c.note_revisions++
    if (row.source_file_id !== null) {
      const set = files.get(row.source_type) ?? new Set()
      set.add(row.source_file_id)
      files.set(row.source_type, set)
    }
  }
  for (const [type, set] of files) tally.of(type).files = set.size
}

/** Counts the notes by source type. */
const countNotes = (sql: SqlClient.SqlClient, noteIds: ReadonlyArray<string>, tally: Tally) =>
  Effect.gen(function* () {
    const rows = yield* inBatches(noteIds, (batch) =>
      rowsOf(
        TypedCount,
        sql`SELECT source_type, count(DISTINCT note_id) AS n FROM messages WHERE note_id IN ${sql.in(batch)}
            GROUP BY source_type`
      )
    )
    for (const row of rows) tally.of(row.source_type).notes += row.n
  })

/** The chunks of the messages, and those of them that have a vector. */
const selectChunks = (sql: SqlClient.SqlClient, messageIds: ReadonlyArray<number>, tally: Tally) =>
  Effect.gen(function* () {
    const chunks = yield* inBatches(messageIds, (batch) =>
      rowsOf(
        ChunkRow,
        sql`SELECT c.id, c.vector_fingerprint, m.source_type FROM chunks c JOIN messages m ON m.id = c.message_id
            WHERE c.message_id IN ${sql.in(batch)}`
      )
    )
    for (const chunk of chunks) {
      const c = tally.of(chunk.source_type)
      c.chunks++
      if (chunk.vector_fingerprint !== null) c.vectors++
    }
    const chunkIds = chunks.map((c) => c.id).sort(ascending)
    const vectorChunkIds = chunks
      .filter((c) => c.vector_fingerprint !== null)
      .map((c) => c.id)
      .sort(ascending)
    return { chunkIds, vectorChunkIds }
  })

/** Transcript sessions the selection may empty: those of its messages, and the file's or session's own. */
const candidateSessions = (sql: SqlClient.SqlClient, selector: ForgetSelector, rows: Iterable<SelectedRow>) =>
  Effect.gen(function* () {
    const kind = selectorKind(selector)
    const candidates = new Set<string>()
    for (const row of rows) {
      if (row.source_file_id !== null && row.session_id !== null) candidates.add(row.session_id)
    }
    const named =
      kind === "file"
        ? sql`SELECT s.id FROM sessions s JOIN source_files f ON f.id = s.source_file_id WHERE f.path = ${selector.file ?? ""}`
        : kind === "session"
          ? sql`SELECT id FROM sessions WHERE id = ${selector.session ?? ""}`
          : undefined
    if (named !== undefined) for (const row of yield* rowsOf(StringId, named)) candidates.add(row.id)
    return [...candidates].sort()
  })

/** Transcript sessions left with no message: their rows go (a later import recreates one). */
const emptiedSessions = (
  sql: SqlClient.SqlClient,
  selector: ForgetSelector,
  rows: Iterable<SelectedRow>,
  selected: ReadonlySet<number>,
  tally: Tally
) =>
  Effect.gen(function* () {
    const sessionIds: Array<string> = []
    for (const id of yield* candidateSessions(sql, selector, rows)) {
      const messages = yield* rowsOf(
        TypedMessage,
        sql`SELECT id, source_type FROM messages WHERE session_id = ${id} AND source_file_id IS NOT NULL`
      )
      if (!messages.every((r) => selected.has(r.id))) continue
      const exists = yield* rowsOf(Count, sql`SELECT count(*) AS n FROM sessions WHERE id = ${id}`)
      if ((exists[0]?.n ?? 0) === 0) continue
      sessionIds.push(id)
      tally.of(messages[0]?.source_type ?? "transcript").sessions++
    }
    return sessionIds
  })

/** A blctx session named by the selector goes with its notes, unless a sub-session still names it. */
const contextSessions = (sql: SqlClient.SqlClient, selector: ForgetSelector, tally: Tally) =>
  Effect.gen(function* () {
    if (selectorKind(selector) !== "context_session") return []
    const rows = yield* rowsOf(
      StringId,
      sql`SELECT s.id FROM context_sessions s WHERE s.id = ${selector.context_session ?? ""}
            AND NOT EXISTS (SELECT 1 FROM context_sessions c WHERE c.parent_session_id = s.id)`
    )
    for (const _ of rows) tally.of(AUTHORED_UPDATE).sessions++
    return rows.map((row) => row.id)
  })

/** Which hook bindings the selector names: a session's, a file's, or those under a project. */
const bindingClause = (sql: SqlClient.SqlClient, selector: ForgetSelector) => {
  switch (selectorKind(selector)) {
    case "session":
      return sql`event_session_id = ${selector.session ?? ""}`
    case "file":
      return sql`transcript_path = ${selector.file ?? ""}`
    case "project": {
      const raw = (selector.project ?? "/").replace(/\/+$/, "")
      const redacted = normalizedProject(selector.project ?? "/")
      return sql`(cwd = ${raw} OR substr(cwd, 1, ${raw.length + 1}) = ${`${raw}/`}
                  OR cwd = ${redacted} OR substr(cwd, 1, ${redacted.length + 1}) = ${`${redacted}/`})`
    }
    default:
      return undefined
  }
}

/** Capture: the hook bindings of the session, file or project, and how many events go with them. */
const captureBindings = (sql: SqlClient.SqlClient, selector: ForgetSelector) =>
  Effect.gen(function* () {
    const where = bindingClause(sql, selector)
    if (where === undefined) return { bindingKeys: [], bindingEvents: 0 }
    const rows = yield* rowsOf(BindingRow, sql`SELECT binding_key FROM capture_bindings WHERE ${where}`)
    const bindingKeys = rows.map((r) => r.binding_key).sort()
    const counts = yield* inBatches(bindingKeys, (batch) =>
      rowsOf(Count, sql`SELECT count(*) AS n FROM capture_events WHERE binding_key IN ${sql.in(batch)}`)
    )
    return { bindingKeys, bindingEvents: counts.reduce((n, r) => n + r.n, 0) }
  })

/** Capture: a time range removes the events received in it. */
const captureEvents = (sql: SqlClient.SqlClient, selector: ForgetSelector) =>
  Effect.gen(function* () {
    if (selectorKind(selector) !== "time_range") return []
    const bounds: Array<Statement.Fragment> = []
    const range = resolveRange({ since: selector.since, until: selector.until, nowMs: 0 })
    if (!(range instanceof TimeRangeError)) {
      if (range.sinceMs !== null) bounds.push(sql`${sql.literal(epochMs("received_at"))} >= ${range.sinceMs}`)
      if (range.untilMs !== null) bounds.push(sql`${sql.literal(epochMs("received_at"))} < ${range.untilMs}`)
    }
    const rows = yield* rowsOf(NumberId, sql`SELECT id FROM capture_events WHERE ${sql.and(bounds)}`)
    return rows.map((r) => r.id).sort(ascending)
  })

/** Runs of consecutive selected messages with no kept one between them, in file order. */
const selectedRuns = (
  fileId: number,
  rows: ReadonlyArray<typeof SpanRow.Type>,
  selected: ReadonlySet<number>
): Array<ForgottenSpan> => {
  const spans: Array<ForgottenSpan> = []
  let run: { start: number; end: number } | undefined
  for (const row of rows) {
    if (selected.has(row.id)) {
      run = run === undefined ? { start: row.byte_start, end: row.byte_end } : { ...run, end: row.byte_end }
    } else if (run !== undefined) {
      spans.push({ source_file_id: fileId, byte_start: run.start, byte_end: run.end })
      run = undefined
    }
  }
  if (run !== undefined) spans.push({ source_file_id: fileId, byte_start: run.start, byte_end: run.end })
  return spans
}

/** The forgotten spans of one file; a file that keeps nothing is forgotten whole, up to what was indexed of it. */
const spansOfFile = (sql: SqlClient.SqlClient, fileId: number, selected: ReadonlySet<number>) =>
  Effect.gen(function* () {
    const rows = yield* rowsOf(
      SpanRow,
      sql`SELECT id, byte_start, byte_end FROM messages WHERE source_file_id = ${fileId} ORDER BY byte_start`
    )
    if (!rows.every((r) => selected.has(r.id))) return selectedRuns(fileId, rows, selected)
    const file = yield* rowsOf(IndexedBytes, sql`SELECT indexed_bytes FROM source_files WHERE id = ${fileId}`)
    const end = Math.max(file[0]?.indexed_bytes ?? 0, ...rows.map((r) => r.byte_end))
    return end > 0 ? [{ source_file_id: fileId, byte_start: 0, byte_end: end }] : []
  })

/** The spans of every transcript file the selection reaches, by file id. */
const forgottenSpans = (sql: SqlClient.SqlClient, rows: Iterable<SelectedRow>, selected: ReadonlySet<number>) =>
  Effect.gen(function* () {
    const fileIds = [...new Set([...rows].flatMap((r) => (r.source_file_id === null ? [] : [r.source_file_id])))]
    const spans: Array<ForgottenSpan> = []
    for (const fileId of fileIds.sort(ascending)) spans.push(...(yield* spansOfFile(sql, fileId, selected)))
    return spans
  })

/** The first items in the order they were stored (a transcript's in file order). */
const previewItems = (sql: SqlClient.SqlClient, messageIds: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const rows = yield* inBatches(messageIds.slice(0, FORGET_PREVIEW_ITEMS), (batch) =>
      rowsOf(
        ItemRow,
        sql`SELECT m.id, m.source_type, m.session_id, m.timestamp, substr(m.text, 1, ${FORGET_EXCERPT_CHARS}) AS excerpt,
                   m.agent, f.path, m.line, m.byte_start, m.byte_end, m.note_id, m.note_revision
            FROM messages m LEFT JOIN source_files f ON f.id = m.source_file_id
            WHERE m.id IN ${sql.in(batch)}`
      )
    )
    return [...rows]
      .sort((a, b) => a.id - b.id)
      .map(
        (r) =>
          new ForgetItem({
            context_id: messageContextId(r.id),
            source_type: r.source_type,
            session_id: r.session_id,
            timestamp: r.timestamp,
            source: sourceLocationOf(r),
            excerpt: r.excerpt
          })
      )
  })

/**
 * Resolves a selector on `sql` into a plan: which messages (every revision of a note any of them
 * belongs to), chunks, vectors, sessions, capture rows and transcript spans go, with counts by
 * source, the first items and the digest a token binds. Reads only.
 */
export const planForget = (sql: SqlClient.SqlClient, selector: ForgetSelector) =>
  Effect.gen(function* () {
    const tally = makeTally()
    const { byId, noteIds } = yield* selectMessages(sql, selector)
    const messageIds = [...byId.keys()].sort(ascending)
    const selected = new Set(messageIds)
    countMessages(byId.values(), tally)
    yield* countNotes(sql, noteIds, tally)
    const { chunkIds, vectorChunkIds } = yield* selectChunks(sql, messageIds, tally)
    const sessionIds = yield* emptiedSessions(sql, selector, byId.values(), selected, tally)
    const contextSessionIds = yield* contextSessions(sql, selector, tally)
    const { bindingKeys, bindingEvents } = yield* captureBindings(sql, selector)
    const eventIds = yield* captureEvents(sql, selector)
    const spans = yield* forgottenSpans(sql, byId.values(), selected)
    const items = yield* previewItems(sql, messageIds)
    return {
      messageIds,
      chunkIds,
      vectorChunkIds,
      noteIds,
      sessionIds,
      contextSessionIds,
      bindingKeys,
      eventIds,
      spans,
      items,
      counts: new ForgetCounts({
        by_source: tally.bySource(),
        messages: messageIds.length,
        capture_bindings: bindingKeys.length,
        capture_events: bindingEvents + eventIds.length
      }),
      digest: sortedDigest({
        messages: messageIds,
        chunks: chunkIds,
        sessions: sessionIds,
        context_sessions: contextSessionIds,
        bindings: bindingKeys,
        events: eventIds
      })
    } satisfies ForgetPlan
  })
