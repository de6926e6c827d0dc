import { createHash } from "node:crypto"
import type { SqlClient, Statement } from "@effect/sql"
import { Effect } from "effect"
import { messageContextId } from "../domain/context-id.js"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import { redactSecrets } from "../redaction/redact.js"
import { sourceLocationOf } from "../retrieval/contract.js"
import { filterClauses } from "../retrieval/lexical-search.js"
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

interface SelectedRow {
  readonly id: number
  readonly source_type: string
  readonly source_file_id: number | null
  readonly session_id: string | null
  readonly note_id: string | null
}

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

/**
 * Resolves a selector on `sql` into a plan: which messages (every revision of a note any of them
 * belongs to), chunks, vectors, sessions, capture rows and transcript spans go, with counts by
 * source, the first items and the digest a token binds. Reads only.
 */
export const planForget = (sql: SqlClient.SqlClient, selector: ForgetSelector) =>
  Effect.gen(function* () {
    const kind = selectorKind(selector)
    const where = yield* matchClause(sql, selector)
    const matched = yield* sql<SelectedRow>`
      SELECT m.id, m.source_type, m.source_file_id, m.session_id, m.note_id FROM messages m WHERE ${where}`
    // Notes are forgotten whole: every revision of a note any matched revision belongs to.
    const noteIds = [...new Set(matched.flatMap((m) => (m.note_id === null ? [] : [m.note_id])))].sort()
    const revisions = yield* inBatches(
      noteIds,
      (batch) =>
        sql<SelectedRow>`SELECT id, source_type, source_file_id, session_id, note_id FROM messages
                         WHERE note_id IN ${sql.in(batch)}`
    )
    const byId = new Map<number, SelectedRow>()
    for (const row of [...matched, ...revisions]) byId.set(row.id, row)
    const messageIds = [...byId.keys()].sort((a, b) => a - b)
    const selected = new Set(messageIds)

    const counts = new Map<string, MutableCounts>()
    const of = (sourceType: string) => {
      let c = counts.get(sourceType)
      if (c === undefined) {
        c = emptyCounts()
        counts.set(sourceType, c)
      }
      return c
    }
    const files = new Map<string, Set<number>>()
    for (const row of byId.values()) {
      const c = of(row.source_type)
      c.messages++
      if (row.note_id !== null) c.note_revisions++
      if (row.source_file_id !== null) {
        const set = files.get(row.source_type) ?? new Set()
        set.add(row.source_file_id)
        files.set(row.source_type, set)
      }
    }
    for (const [type, set] of files) of(type).files = set.size
    for (const row of yield* inBatches(
      noteIds,
      (batch) => sql<{ source_type: string; n: number }>`
        SELECT source_type, count(DISTINCT note_id) AS n FROM messages WHERE note_id IN ${sql.in(batch)} GROUP BY source_type`
    )) {
      of(row.source_type).notes += row.n
    }

    const chunks = yield* inBatches(
      messageIds,
      (batch) => sql<{ id: number; vector_fingerprint: string | null; source_type: string }>`
        SELECT c.id, c.vector_fingerprint, m.source_type FROM chunks c JOIN messages m ON m.id = c.message_id
        WHERE c.message_id IN ${sql.in(batch)}`
    )
    for (const chunk of chunks) {
      const c = of(chunk.source_type)
      c.chunks++
      if (chunk.vector_fingerprint !== null) c.vectors++
    }
    const chunkIds = chunks.map((c) => c.id).sort((a, b) => a - b)
    const vectorChunkIds = chunks
      .filter((c) => c.vector_fingerprint !== null)
      .map((c) => c.id)
      .sort((a, b) => a - b)

    // Transcript sessions left with no message: their rows go (a later import recreates one).
    const candidateSessions = new Set<string>()
    for (const row of byId.values()) {
      if (row.source_file_id !== null && row.session_id !== null) candidateSessions.add(row.session_id)
    }
    if (kind === "file") {
      for (const row of yield* sql<{
        id: string
      }>`SELECT s.id FROM sessions s JOIN source_files f ON f.id = s.source_file_id
                                                  WHERE f.path = ${selector.file ?? ""}`) {
        candidateSessions.add(row.id)
      }
    }
    if (kind === "session") {
      for (const row of yield* sql<{ id: string }>`SELECT id FROM sessions WHERE id = ${selector.session ?? ""}`) {
        candidateSessions.add(row.id)
      }
    }
    const sessionIds: Array<string> = []
    for (const id of [...candidateSessions].sort()) {
      const rows = yield* sql<{ id: number; source_type: string }>`
        SELECT id, source_type FROM messages WHERE session_id = ${id} AND source_file_id IS NOT NULL`
      if (rows.every((r) => selected.has(r.id))) {
        const exists = yield* sql<{ n: number }>`SELECT count(*) AS n FROM sessions WHERE id = ${id}`
        if ((exists[0]?.n ?? 0) === 0) continue
        sessionIds.push(id)
        of(rows[0]?.source_type ?? "transcript").sessions++
      }
    }

    // A blctx session named by the selector goes with its notes, unless a sub-session still names it.
    const contextSessionIds: Array<string> = []
    if (kind === "context_session") {
      const rows = yield* sql<{ id: string }>`
        SELECT s.id FROM context_sessions s WHERE s.id = ${selector.context_session ?? ""}
          AND NOT EXISTS (SELECT 1 FROM context_sessions c WHERE c.parent_session_id = s.id)`
      for (const row of rows) {
        contextSessionIds.push(row.id)
        of(AUTHORED_UPDATE).sessions++
      }
    }

    // Capture: the hook bindings of the session, file or project, with their events; a time range
    // removes the events received in it.
    let bindingKeys: ReadonlyArray<string> = []
    let eventIds: ReadonlyArray<number> = []
    let bindingEvents = 0
    const bindingWhere =
      kind === "session"
        ? sql`event_session_id = ${selector.session ?? ""}`
        : kind === "file"
          ? sql`transcript_path = ${selector.file ?? ""}`
          : kind === "project"
            ? (() => {
                const raw = (selector.project ?? "/").replace(/\/+$/, "")
                const redacted = normalizedProject(selector.project ?? "/")
                return sql`(cwd = ${raw} OR substr(cwd, 1, ${raw.length + 1}) = ${`${raw}/`}
                            OR cwd = ${redacted} OR substr(cwd, 1, ${redacted.length + 1}) = ${`${redacted}/`})`
              })()
            : undefined
    if (bindingWhere !== undefined) {
      bindingKeys = (yield* sql<{
        binding_key: string
      }>`SELECT binding_key FROM capture_bindings WHERE ${bindingWhere}`)
        .map((r) => r.binding_key)
        .sort()
      bindingEvents = (yield* inBatches(
        bindingKeys,
        (batch) => sql<{ n: number }>`SELECT count(*) AS n FROM capture_events WHERE binding_key IN ${sql.in(batch)}`
      )).reduce((n, r) => n + r.n, 0)
    }
    if (kind === "time_range") {
      const bounds: Array<Statement.Fragment> = []
      const range = resolveRange({ since: selector.since, until: selector.until, nowMs: 0 })
      if (!(range instanceof TimeRangeError)) {
        if (range.sinceMs !== null) bounds.push(sql`${sql.literal(epochMs("received_at"))} >= ${range.sinceMs}`)
        if (range.untilMs !== null) bounds.push(sql`${sql.literal(epochMs("received_at"))} < ${range.untilMs}`)
      }
      eventIds = (yield* sql<{ id: number }>`SELECT id FROM capture_events WHERE ${sql.and(bounds)}`)
        .map((r) => r.id)
        .sort((a, b) => a - b)
    }

    // Spans: per file, runs of consecutive forgotten messages with no kept one between them; a
    // file that keeps nothing is forgotten whole, up to what was indexed of it.
    const spans: Array<ForgottenSpan> = []
    const fileIds = [
      ...new Set([...byId.values()].flatMap((r) => (r.source_file_id === null ? [] : [r.source_file_id])))
    ]
    for (const fileId of fileIds.sort((a, b) => a - b)) {
      const rows = yield* sql<{ id: number; byte_start: number; byte_end: number }>`
        SELECT id, byte_start, byte_end FROM messages WHERE source_file_id = ${fileId} ORDER BY byte_start`
      if (rows.every((r) => selected.has(r.id))) {
        const file = yield* sql<{ indexed_bytes: number }>`SELECT indexed_bytes FROM source_files WHERE id = ${fileId}`
        const end = Math.max(file[0]?.indexed_bytes ?? 0, ...rows.map((r) => r.byte_end))
        if (end > 0) spans.push({ source_file_id: fileId, byte_start: 0, byte_end: end })
        continue
      }
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
    }

    // The first items in the order they were stored (a transcript's in file order).
    const itemRows = yield* inBatches(
      messageIds.slice(0, FORGET_PREVIEW_ITEMS),
      (batch) => sql<{
        id: number
        source_type: string
        session_id: string | null
        timestamp: string | null
        excerpt: string
        agent: string | null
        path: string | null
        line: number | null
        byte_start: number | null
        byte_end: number | null
        note_id: string | null
        note_revision: number | null
      }>`
        SELECT m.id, m.source_type, m.session_id, m.timestamp, substr(m.text, 1, ${FORGET_EXCERPT_CHARS}) AS excerpt,
               m.agent, f.path, m.line, m.byte_start, m.byte_end, m.note_id, m.note_revision
        FROM messages m LEFT JOIN source_files f ON f.id = m.source_file_id
        WHERE m.id IN ${sql.in(batch)}`
    )
    const items = itemRows
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

    const bySource = Object.fromEntries(
      [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, new SourceCounts(v)])
    )
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
        by_source: bySource,
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
