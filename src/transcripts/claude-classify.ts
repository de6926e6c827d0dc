import type { SessionInfo, TranscriptClassification, TranscriptSummary } from "./classification.js"
import type { Classifier } from "./classify.js"
import {
  ENVELOPE_TYPES,
  interpret,
  isSidechain,
  KNOWN_ENVELOPE_FIELDS,
  KNOWN_TYPES,
  recordTypeOf,
  stringField
} from "./claude-records.js"
import { positionOf, type TranscriptRecord } from "./record.js"
import { classificationOf, makeTurnTracker, type RecordBase } from "./turn-tracker.js"

/** What a Claude Code sub-agent's session is called in `SessionInfo.subagent`. */
export const CLAUDE_SUBAGENT = "sidechain"

const increment = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1
}

/** What the records say about the session, gathered as they pass (every record repeats it). */
interface SessionFacts {
  sessionId: string | null
  agentId: string | null
  cwd: string | null
  version: string | null
  entrypoint: string | null
  startedAt: string | null
}

const sessionOf = (facts: SessionFacts, subagentFile: boolean): SessionInfo | null => {
  if (facts.sessionId === null && facts.cwd === null && facts.version === null) return null
  // A sub-agent's file repeats its parent's `sessionId`; its own id is the parent's and its agent's.
  const id = subagentFile
    ? facts.sessionId !== null && facts.agentId !== null
      ? `${facts.sessionId}/agent-${facts.agentId}`
      : null
    : facts.sessionId
  return {
    id,
    cwd: facts.cwd,
    cli_version: facts.version,
    originator: facts.entrypoint,
    started_at: facts.startedAt,
    forked_from_id: null,
    subagent: subagentFile ? CLAUDE_SUBAGENT : null,
    parent_history_from_line: null,
    parent_session_id: subagentFile ? facts.sessionId : null
  }
}

const classifier = <R>(keepDecisions: boolean, result: (c: TranscriptClassification) => R): Classifier<R> => {
  const tracker = makeTurnTracker({ keepDecisions })
  const byType: Record<string, number> = {}
  const unknownTypes: Record<string, number> = {}
  const unknownFields: Record<string, number> = {}
  const facts: SessionFacts = {
    sessionId: null,
    agentId: null,
    cwd: null,
    version: null,
    entrypoint: null,
    startedAt: null
  }
  /** Decided by the first conversation record: a sub-agent's own file is a sidechain throughout. */
  let subagentFile: boolean | null = null
  let parseErrors = 0

  const push = (record: TranscriptRecord) => {
    if (record.kind === "parse_error") {
      parseErrors++
      increment(byType, "parse_error")
      tracker.unreadable(record, record.reason)
      return
    }
    const entry = record.entry
    const recordType = recordTypeOf(entry)
    increment(byType, recordType)
    if (!KNOWN_TYPES.has(entry.type)) increment(unknownTypes, entry.type)
    if (ENVELOPE_TYPES.has(entry.type)) {
      for (const key of Object.keys(entry)) if (!KNOWN_ENVELOPE_FIELDS.has(key)) increment(unknownFields, key)
    }
    facts.sessionId ??= stringField(entry, "sessionId")
    facts.agentId ??= stringField(entry, "agentId")
    facts.cwd ??= stringField(entry, "cwd")
    facts.version ??= stringField(entry, "version")
    facts.entrypoint ??= stringField(entry, "entrypoint")
    facts.startedAt ??= entry.timestamp ?? null
    const base: RecordBase = { ...positionOf(record), record_type: recordType, timestamp: entry.timestamp ?? null }

    const conversation = entry.type === "user" || entry.type === "assistant"
    if (conversation && subagentFile === null) subagentFile = isSidechain(entry)
    if (conversation && subagentFile === false && isSidechain(entry)) {
      tracker.record(base, "excluded", "sub-agent conversation inside its parent's file (tool traffic)")
      return
    }
    const interpretation = interpret(entry)
    if (interpretation._tag === "Fixed") {
      tracker.record(base, interpretation.decision, interpretation.reason)
      return
    }
    tracker.message(base, interpretation.message, null, subagentFile === true ? CLAUDE_SUBAGENT : null)
  }

  const finish = (): R => {
    const tracked = tracker.finish()
    return result(
      classificationOf(tracked, sessionOf(facts, subagentFile === true), {
        parseErrors,
        byType,
        unknownTypes,
        unknownFields
      })
    )
  }

  return { push, finish }
}

/**
 * The Claude Code classifier, fed one record at a time in file order (the same contract as the
 * Codex one, `classify.ts`): a real user prompt opens a turn and is indexed, each assistant text
 * block is indexed at its own line (the last of a turn is its answer); reasoning, tool calls and
 * results are excluded; attachments, reminders, meta and command messages are context; the
 * compaction summary is context written by the model; bookkeeping is metadata; and anything not
 * understood is unclassified and counted. `{ decisions: false }` keeps no per-record decision.
 */
export function makeClaudeClassifier(): Classifier<TranscriptClassification>
export function makeClaudeClassifier(options: { readonly decisions: false }): Classifier<TranscriptSummary>
export function makeClaudeClassifier(options?: {
  readonly decisions: false
}): Classifier<TranscriptClassification> | Classifier<TranscriptSummary> {
  if (options?.decisions === false) {
    return classifier(false, ({ decisions: _, ...summary }): TranscriptSummary => summary)
  }
  return classifier(true, (classification) => classification)
}

/** Classifies a whole Claude Code transcript: every record gets a decision, a reason and a turn. */
export const classifyClaudeTranscript = (records: Iterable<TranscriptRecord>): TranscriptClassification => {
  const c = makeClaudeClassifier()
  for (const record of records) c.push(record)
  return c.finish()
}
