import { createHash } from "node:crypto"
import type { SessionInfo, TranscriptClassification } from "./classification.js"
import { type Classifier, type ClassifierFactory, classifierModes, classifyAll } from "./classify.js"
import {
  cwdOf,
  HEADER_TYPE,
  interpret,
  KNOWN_HEADER_FIELDS,
  KNOWN_MESSAGE_FIELDS,
  KNOWN_TYPES,
  recordTypeOf,
  stringField
} from "./gemini-records.js"
import { positionOf, type SourcePosition, type TranscriptRecord } from "./record.js"
import { makeRecordCounts } from "./record-counts.js"
import { candidateOf, classificationOf, makeTurnTracker, type RecordBase } from "./turn-tracker.js"

/** What a Gemini CLI sub-agent's session is called in `SessionInfo.subagent`. */
export const GEMINI_SUBAGENT = "subagent"

/** What the records say about the session, gathered as they pass. */
interface SessionFacts {
  sessionId: string | null
  cwd: string | null
  kind: string | null
  startedAt: string | null
}

const sessionOf = (facts: SessionFacts): SessionInfo | null => {
  if (facts.sessionId === null && facts.cwd === null) return null
  return {
    id: facts.sessionId,
    cwd: facts.cwd,
    cli_version: null,
    originator: null,
    started_at: facts.startedAt,
    forked_from_id: null,
    subagent: facts.kind === GEMINI_SUBAGENT ? GEMINI_SUBAGENT : null,
    parent_history_from_line: null
  }
}

/** A message already given to the tracker: where, and a digest of its text. */
interface Seen {
  readonly source: SourcePosition
  readonly digest: string
}

const digestOf = (text: string) => createHash("sha256").update(text, "utf16le").digest("base64")

const classifier = <R>(keepDecisions: boolean, result: (c: TranscriptClassification) => R): Classifier<R> => {
  const tracker = makeTurnTracker({ keepDecisions })
  const counts = makeRecordCounts()
  const facts: SessionFacts = { sessionId: null, cwd: null, kind: null, startedAt: null }
  /**
   * Messages by id: the CLI writes a message again when it adds token counts or tool calls, so a
   * copy with the same text is a duplicate. One small entry per message, never its text.
   */
  const seen = new Map<string, Seen>()
  let headers = 0

  const gather = (entry: Readonly<Record<string, unknown>> & { readonly type: string }) => {
    if (entry.type === HEADER_TYPE) {
      facts.sessionId ??= stringField(entry, "sessionId")
      facts.kind ??= stringField(entry, "kind")
      facts.startedAt ??= stringField(entry, "startTime")
    }
    if (facts.cwd === null && (entry.type === HEADER_TYPE || entry.type === "$set" || entry.type === "user")) {
      facts.cwd = cwdOf(entry)
    }
  }

  const push = (record: TranscriptRecord) => {
    if (record.kind === "parse_error") return counts.unreadable(tracker, record)
    const entry = record.entry
    const recordType = recordTypeOf(entry)
    counts.record(recordType, entry.type, KNOWN_TYPES)
    if (entry.type === "user" || entry.type === "gemini") counts.fields(entry, KNOWN_MESSAGE_FIELDS)
    if (entry.type === HEADER_TYPE) counts.fields(entry, KNOWN_HEADER_FIELDS)
    gather(entry)
    const base: RecordBase = { ...positionOf(record), record_type: recordType, timestamp: entry.timestamp ?? null }

    if (entry.type === HEADER_TYPE && headers++ > 0) {
      tracker.record(base, "metadata", "session header written again: the session was resumed")
      return
    }
    const message = candidateOf(tracker, base, interpret(entry))
    if (message === undefined) return
    const id = stringField(entry, "id")
    const digest = digestOf(message.text)
    const earlier = id === null ? undefined : seen.get(id)
    if (earlier !== undefined && earlier.digest === digest) {
      tracker.record(
        base,
        "duplicate",
        `same ${message.role} message as line ${earlier.source.line} (written again by the CLI with its token counts or tool calls)`,
        {
          message,
          duplicate_of: earlier.source
        }
      )
      return
    }
    if (id !== null) seen.set(id, { source: positionOf(record), digest })
    tracker.message(base, message, null, facts.kind === GEMINI_SUBAGENT ? GEMINI_SUBAGENT : null)
  }

  const finish = (): R => result(classificationOf(tracker.finish(), sessionOf(facts), counts.counts()))

  return { push, finish }
}

/**
 * The Gemini CLI classifier, fed one record at a time in file order (the same contract as the
 * Codex and Claude Code ones): the person's prompt opens a turn and is indexed without the
 * context the CLI or a hook added to it; each model message with text is indexed (the last of a
 * turn is its answer); reasoning, tool calls and results, and the CLI's notices are excluded; the
 * session context is context; headers, `$set` updates, history snapshots and rewind markers are
 * metadata; a message written again with the same id and text is a duplicate; anything not
 * understood is unclassified and counted. `{ decisions: false }` keeps no per-record decision.
 */
export const makeGeminiClassifier: ClassifierFactory = classifierModes(classifier)

/** Classifies a whole Gemini CLI session file: every record gets a decision, a reason and a turn. */
export const classifyGeminiTranscript = classifyAll(makeGeminiClassifier)
