import type { SessionInfo, TranscriptClassification, TranscriptSummary } from "./classification.js"
import {
  completesTurn,
  interpret,
  KNOWN_ENVELOPE_FIELDS,
  KNOWN_TYPES,
  payloadTypeOf,
  recordTypeOf,
  sessionIdOf,
  sessionInfoOf
} from "./codex-records.js"
import { injectedContextKind } from "./injected-context.js"
import { positionOf, type TranscriptRecord } from "./record.js"
import { makeRecordCounts } from "./record-counts.js"
import { classificationOf, makeTurnTracker, type RecordBase } from "./turn-tracker.js"

/** Fed one record at a time, in file order; `finish` once, after the last. */
export interface Classifier<R> {
  readonly push: (record: TranscriptRecord) => void
  readonly finish: () => R
}

/** A format's classifier in its two modes: every decision kept (the default), or none (`{ decisions: false }`). */
export interface ClassifierFactory {
  (): Classifier<TranscriptClassification>
  (options: { readonly decisions: false }): Classifier<TranscriptSummary>
}

/** Every format builds one classifier and offers it in both modes; the lean one drops the decisions. */
export const classifierModes = (
  classifier: <R>(keepDecisions: boolean, result: (c: TranscriptClassification) => R) => Classifier<R>
): ClassifierFactory =>
  ((options?: { readonly decisions: false }) =>
    options?.decisions === false
      ? classifier(false, ({ decisions: _, ...summary }): TranscriptSummary => summary)
      : classifier(true, (classification) => classification)) as ClassifierFactory

/** Classifies a whole transcript with a format's classifier: every record gets a decision, a reason and a turn. */
export const classifyAll =
  (make: ClassifierFactory) =>
  (records: Iterable<TranscriptRecord>): TranscriptClassification => {
    const c = make()
    for (const record of records) c.push(record)
    return c.finish()
  }

const classifier = <R>(keepDecisions: boolean, result: (summary: TranscriptClassification) => R): Classifier<R> => {
  const tracker = makeTurnTracker({ keepDecisions })
  const counts = makeRecordCounts()
  let session: SessionInfo | null = null

  /** A later `session_meta` naming the session this one was forked from: the copied history starts. */
  const isReplayedParent = (payload: unknown, line: number): boolean => {
    const own = session
    if (own === null || own.forked_from_id === null || own.parent_history_from_line !== null) return false
    if (sessionIdOf(payload) !== own.forked_from_id) return false
    session = { ...own, parent_history_from_line: line }
    return true
  }

  const push = (record: TranscriptRecord) => {
    if (record.kind === "parse_error") return counts.unreadable(tracker, record)
    const entry = record.entry
    const subtype = payloadTypeOf(entry.payload)
    const recordType = recordTypeOf(entry.type, subtype)
    counts.record(recordType, entry.type, KNOWN_TYPES)
    counts.fields(entry, KNOWN_ENVELOPE_FIELDS)
    const base: RecordBase = { ...positionOf(record), record_type: recordType, timestamp: entry.timestamp ?? null }
    if (entry.type === "session_meta") {
      if (isReplayedParent(entry.payload, record.line)) {
        tracker.record(base, "metadata", "parent session metadata: history copied by the fork starts here")
        return
      }
      session ??= sessionInfoOf(entry.payload)
    }

    const interpretation = interpret(entry.type, entry.payload, subtype)
    if (interpretation._tag === "TurnStart") {
      tracker.startTurn(interpretation.turnId, base)
      tracker.record(base, "metadata", "turn bookkeeping")
      return
    }
    if (interpretation.turnId !== undefined && interpretation.turnId !== null) {
      tracker.seeTurnId(interpretation.turnId, base)
    }
    if (interpretation._tag === "Fixed") {
      tracker.record(base, interpretation.decision, interpretation.reason)
      if (completesTurn(recordType)) tracker.completeTurn()
      return
    }
    const m = interpretation.message
    tracker.message(base, m, m.role === "user" ? injectedContextKind(m.text) : null, session?.subagent ?? null)
  }

  const finish = (): R => {
    const tracked = tracker.finish()
    return result(classificationOf(tracked, session, counts.counts()))
  }

  return { push, finish }
}

/**
 * The classifier, fed one record at a time so a whole file is classified in the same streaming
 * pass that reads it (the importer and `blctx explore` share it). By default `finish` returns the
 * decision for every record (what explore shows). With `{ decisions: false }` (the lean mode the
 * importer uses) no per-record decision is kept: `finish` returns the turns with their selected
 * messages, the session, the totals and the first unreadable lines, so memory grows with the
 * messages proposed for the index, never with the tool output and other records set aside.
 */
export const makeClassifier: ClassifierFactory = classifierModes(classifier)

/** Classifies a whole transcript: every record gets a decision, a reason and a turn. */
export const classifyTranscript = classifyAll(makeClassifier)
