import { DateTime, Effect } from "effect"
import { redactNullable, redactSecrets } from "../redaction/redact.js"
import { redactSession } from "../redaction/redact-metadata.js"
import type {
  ClassificationTotals,
  RecordDecision,
  SelectedMessage,
  SessionInfo,
  TurnFlag
} from "../transcripts/classification.js"
import { formatOfHandle } from "../transcripts/formats/registry.js"
import { readOptionsOf } from "../transcripts/formats/transcript-format.js"
import { forEachRecord, recordsOf } from "../transcripts/reader.js"
import type { SourcePosition, TranscriptRecord } from "../transcripts/record.js"
import { TranscriptFiles } from "../transcripts/transcript-files.js"
import { ExploreFailure } from "./explore-failure.js"

export type ExploreView = "conversation" | "messages" | "raw" | "preview"

export interface ExploreFileRequest {
  readonly path: string
  readonly view: ExploreView
  readonly details: boolean
  readonly startLine: number
  readonly limit: number
}

/**
 * A message proposed for the search index, as explore shows it: its text exactly as it would be
 * stored (redacted) and its copies in other representations (`duplicate`), without its source
 * line's time.
 */
export type ExploreMessage = Omit<SelectedMessage, "timestamp">

export interface ExploreDecision extends SourcePosition {
  readonly record_type: string
  readonly decision: string
  readonly reason: string
  readonly duplicate_of?: SourcePosition
}

export interface ExploreTurn {
  readonly number: number
  readonly turn_id: string | null
  readonly grouping: string
  readonly first_line: number
  readonly last_line: number
  readonly records: number
  readonly flags: ReadonlyArray<TurnFlag>
  readonly messages: ReadonlyArray<ExploreMessage>
  /** Every record's decision in this turn (preview with `--details`). */
  readonly decisions?: ReadonlyArray<ExploreDecision>
}

/** A candidate message as written, labelled with what the classifier proposes for it. */
export interface ExploreCandidate extends SourcePosition {
  readonly record_type: string
  readonly role: string
  readonly text: string
  readonly phase: string | null
  readonly representation: string
  readonly decision: string
  readonly reason: string
  readonly turn: number
  readonly duplicate_of?: SourcePosition
}

export interface ExploreRawRecord extends SourcePosition {
  readonly record_type: string
  readonly timestamp: string | null
  readonly decision: string
  readonly reason: string
  readonly turn: number
  /** The decoded line, all fields kept (absent for unreadable lines). */
  readonly value?: unknown
  readonly error?: { readonly reason: string; readonly message: string }
}

export interface ExplorePage {
  readonly start_line: number
  readonly limit: number
  /** What `--limit` counts in this view. */
  readonly unit: "turns" | "records"
  /** How many of those units the page holds (the records before the first turn are not a turn). */
  readonly shown: number
  /** Pass as `--start-line` to see what comes next; null at the end. */
  readonly next_line: number | null
}

export interface ExploreFileResult {
  readonly path: string
  /** The transcript format that read the file (`codex`) and the agent that wrote it. */
  readonly format: string
  readonly agent: string
  readonly view: ExploreView
  readonly captured_size: number
  readonly modified_at: string
  readonly session: SessionInfo | null
  /** Counts over the whole captured file, whatever the page shows. */
  readonly totals: ClassificationTotals
  readonly page: ExplorePage
  readonly note?: string
  readonly turns?: ReadonlyArray<ExploreTurn>
  readonly exclusions?: Readonly<Record<string, number>>
  readonly candidates?: ReadonlyArray<ExploreCandidate>
  readonly records?: ReadonlyArray<ExploreRawRecord>
}

const decisionOf = (d: RecordDecision): ExploreDecision => ({
  line: d.line,
  byte_start: d.byte_start,
  byte_end: d.byte_end,
  record_type: d.record_type,
  decision: d.decision,
  reason: d.reason,
  ...(d.duplicate_of === undefined ? {} : { duplicate_of: d.duplicate_of })
})

/**
 * One file, one view. The whole captured file is read and classified in one streaming pass
 * before anything is paginated, so counts and decisions never depend on the page.
 */
const exploreScoped = Effect.fn("Explore.file")(function* (request: ExploreFileRequest) {
  const { path, view, startLine, limit } = request
  if (path.endsWith(".zst")) {
    return yield* new ExploreFailure({
      message: `${path} is compressed (zstd); blctx does not read compressed transcripts yet`,
      path,
      remediation: `Decompress a copy to look at it: zstd -d -c '${path}' > /tmp/transcript.jsonl, then blctx explore /tmp/transcript.jsonl`
    })
  }
  const files = yield* TranscriptFiles
  const opened = yield* files
    .open(path)
    .pipe(
      Effect.mapError(
        (e) => new ExploreFailure({ message: `${e.op} ${e.path}: ${e.message}`, path, remediation: e.remediation })
      )
    )
  // The registry says which agent's format this is, from the name and first bytes; none: refused.
  const format = yield* formatOfHandle(opened).pipe(
    Effect.mapError((e) =>
      e._tag === "UnknownTranscriptFormat"
        ? new ExploreFailure({ message: e.message, path, remediation: e.remediation })
        : new ExploreFailure({ message: `${e.op} ${e.path}: ${e.message}`, path, remediation: e.remediation })
    )
  )
  const classifier = format.classifier()
  // Raw view keeps the decoded records of its page only: memory stays bounded by --limit.
  const kept = new Map<number, TranscriptRecord>()
  yield* forEachRecord(recordsOf(opened, readOptionsOf(format)), (record) => {
    classifier.push(record)
    if (view === "raw" && record.line >= startLine && kept.size < limit) kept.set(record.line, record)
  }).pipe(
    Effect.mapError(
      (e) => new ExploreFailure({ message: `${e.op} ${e.path}: ${e.message}`, path, remediation: e.remediation })
    )
  )
  const c = classifier.finish()
  const modifiedAt = DateTime.formatIso(DateTime.unsafeMake(opened.mtimeMs))
  const base = {
    path,
    format: format.id,
    agent: format.agent,
    view,
    captured_size: opened.size,
    modified_at: modifiedAt,
    // As stored: the session's metadata redacted like the messages.
    session: redactSession(c.session).session,
    totals: c.totals
  }

  if (view === "raw" || view === "messages") {
    const pool = view === "raw" ? c.decisions : c.decisions.filter((d) => d.message !== undefined)
    const after = pool.filter((d) => d.line >= startLine)
    const page = after.slice(0, limit)
    const next = after[limit]?.line ?? null
    const pageInfo: ExplorePage = { start_line: startLine, limit, unit: "records", shown: page.length, next_line: next }
    if (view === "messages") {
      const candidates: Array<ExploreCandidate> = page.flatMap((d) =>
        d.message === undefined
          ? []
          : [
              {
                line: d.line,
                byte_start: d.byte_start,
                byte_end: d.byte_end,
                record_type: d.record_type,
                role: d.message.role,
                text: d.message.text,
                phase: d.message.phase,
                representation: d.message.representation,
                decision: d.decision,
                reason: d.reason,
                turn: d.turn,
                ...(d.duplicate_of === undefined ? {} : { duplicate_of: d.duplicate_of })
              }
            ]
      )
      const result: ExploreFileResult = {
        ...base,
        page: pageInfo,
        note: "Candidates as written in the file, injected context included: not approved import data. See --view preview for what would be indexed.",
        candidates
      }
      return result
    }
    const records: Array<ExploreRawRecord> = page.map((d) => {
      const record = kept.get(d.line)
      const common = {
        line: d.line,
        byte_start: d.byte_start,
        byte_end: d.byte_end,
        record_type: d.record_type,
        timestamp: d.timestamp,
        decision: d.decision,
        reason: d.reason,
        turn: d.turn
      }
      if (record === undefined) return common
      return record.kind === "record"
        ? { ...common, value: record.entry }
        : { ...common, error: { reason: record.reason, message: record.message } }
    })
    const result: ExploreFileResult = { ...base, page: pageInfo, records }
    return result
  }

  // Conversation and preview count complete turns. The records before the first turn (turn 0)
  // are not a turn: they are shown with the page that starts at or before them, in addition to
  // the `limit` real turns, and never counted as one.
  const preTurn = c.turns.filter(
    (t) => t.number === 0 && t.first_line >= startLine && (view === "preview" ? t.records > 0 : t.messages.length > 0)
  )
  const real = c.turns
    .filter((t) => t.number > 0 && t.first_line >= startLine)
    .sort((a, b) => a.first_line - b.first_line)
  const page = [...preTurn, ...real.slice(0, limit)].sort((a, b) => a.first_line - b.first_line)
  const next = real[limit]?.first_line ?? null
  const shownTurns = page.filter((t) => t.number > 0).length
  const byTurn = new Map<number, Array<ExploreDecision>>()
  if (view === "preview" && request.details) {
    const shown = new Set(page.map((t) => t.number))
    for (const d of c.decisions) {
      if (!shown.has(d.turn)) continue
      const list = byTurn.get(d.turn) ?? []
      list.push(decisionOf(d))
      byTurn.set(d.turn, list)
    }
  }
  const turns: Array<ExploreTurn> = page.map((t) => ({
    number: t.number,
    turn_id: redactNullable(t.turn_id).text,
    grouping: t.grouping,
    first_line: t.first_line,
    last_line: t.last_line,
    records: t.records,
    flags: t.flags,
    messages: t.messages.map((m) => ({
      kind: m.kind,
      role: m.role,
      // Exactly the text that would be stored and searchable: redacted.
      text: redactSecrets(m.text).text,
      phase: m.phase,
      reason: m.reason,
      record_type: m.record_type,
      source: m.source,
      duplicates: m.duplicates
    })),
    ...(view === "preview" && request.details ? { decisions: byTurn.get(t.number) ?? [] } : {})
  }))
  const result: ExploreFileResult = {
    ...base,
    page: { start_line: startLine, limit, unit: "turns", shown: shownTurns, next_line: next },
    turns,
    ...(view === "preview" ? { exclusions: c.totals.by_reason } : {})
  }
  return result
})

/** See `exploreScoped`: the file is closed when the result is ready. */
export const exploreFile = (request: ExploreFileRequest) => Effect.scoped(exploreScoped(request))
