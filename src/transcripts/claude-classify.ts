import type { SessionInfo, TranscriptClassification } from "./classification.js"
import { type Classifier, type ClassifierFactory, classifierModes, classifyAll } from "./classify.js"
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
import { makeRecordCounts } from "./record-counts.js"
import { candidateOf, classificationOf, makeTurnTracker, type RecordBase } from "./turn-tracker.js"

/** What a Claude Code sub-agent's session is called in `SessionInfo.subagent`. */
export const CLAUDE_SUBAGENT = "sidechain"

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
  const counts = makeRecordCounts()
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

  const push = (record: TranscriptRecord) => {
    if (record.kind === "parse_error") return counts.unreadable(tracker, record)
    const entry = record.entry
    const recordType = recordTypeOf(entry)
    counts.record(recordType, entry.type, KNOWN_TYPES)
    if (ENVELOPE_TYPES.has(entry.type)) {
      counts.fields(entry, KNOWN_ENVELOPE_FIELDS)
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
    const message = candidateOf(tracker, base, interpret(entry))
    if (message !== undefined) tracker.message(base, message, null, subagentFile === true ? CLAUDE_SUBAGENT : null)
  }

  const finish = (): R => {
    const tracked = tracker.finish()
    return result(classificationOf(tracked, sessionOf(facts, subagentFile === true), counts.counts()))
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
export const makeClaudeClassifier: ClassifierFactory = classifierModes(classifier)

/** Classifies a whole Claude Code transcript: every record gets a decision, a reason and a turn. */
export const classifyClaudeTranscript = classifyAll(makeClaudeClassifier)
