import { createHash } from "node:crypto"
import {
  DECISIONS,
  type Decision,
  type MessageCandidate,
  type MessageKind,
  type RecordDecision,
  type Representation,
  type SelectedMessage,
  type TranscriptClassification,
  type Turn,
  type TurnFlag,
  type UnreadableLine
} from "./classification.js"
import { positionOf, type SourcePosition, type UnreadableReason } from "./record.js"

/**
 * The turn state machine: which turn each record belongs to, which messages are copies of one
 * another, and which are selected for the index. It knows nothing of Codex's record types: the
 * record tables (`codex-records.ts`) say what a record is, `classify.ts` tells this machine.
 *
 * Memory: per record, only counters move, unless `keepDecisions` asks for every record's
 * decision (`blctx explore`). What stays for the whole file is one small object per turn, the
 * selected messages (the candidates for the index), and for messages not selected (injected
 * context, for instance) only their position and a digest of their text, so a later copy can
 * still be recognised as a duplicate.
 */

/** Where a record is and what it is, as every decision carries it. */
export interface RecordBase extends SourcePosition {
  /** `type` of the line, plus `/payload.type` when there is one. */
  readonly record_type: string
  readonly timestamp: string | null
}

/** The unreadable lines named in a summary; the rest are only counted. */
export const UNREADABLE_LINES_KEPT = 5

/** A message selected for the index, until `finish` turns it into a `SelectedMessage`. */
interface SelectedEntry {
  readonly base: RecordBase
  readonly message: MessageCandidate
  kind: MessageKind
  reason: string
  /** Its index in `decisions` when decisions are kept, else -1. */
  readonly decision: number
  readonly duplicates: Array<SourcePosition>
}

/** A message not yet matched by a copy in another representation. */
interface Remembered {
  readonly representation: Representation
  readonly source: SourcePosition
  readonly record_type: string
  /** The selected message it is, if it was selected: its copies are listed with it. */
  readonly selected: SelectedEntry | null
}

interface MutableTurn {
  readonly number: number
  turn_id: string | null
  grouping: Turn["grouping"]
  first_line: number
  first_byte: number
  last_line: number
  records: number
  hasRequest: boolean
  hasAssistant: boolean
  completed: boolean
  /** By message digest: candidates not yet matched by a copy in another representation. */
  readonly unmatched: Map<string, Array<Remembered>>
  readonly selected: Array<SelectedEntry>
}

export interface TrackedTurns {
  readonly turns: ReadonlyArray<Turn>
  /** Every record's decision, in file order; empty unless decisions were kept. */
  readonly decisions: ReadonlyArray<RecordDecision>
  readonly records: number
  readonly by_decision: Readonly<Record<Decision, number>>
  readonly by_reason: Readonly<Record<string, number>>
  readonly unreadable_lines: ReadonlyArray<UnreadableLine>
}

/** What a classifier counts itself, beside what the tracker counts. */
export interface ClassifierCounts {
  readonly parseErrors: number
  readonly byType: TranscriptClassification["totals"]["by_type"]
  readonly unknownTypes: TranscriptClassification["totals"]["unknown_types"]
  readonly unknownFields: TranscriptClassification["totals"]["unknown_fields"]
}

/** A format's classification from the tracker's result, its session and its own counts: one shape for every format. */
export const classificationOf = (
  tracked: TrackedTurns,
  session: TranscriptClassification["session"],
  counts: ClassifierCounts
): TranscriptClassification => ({
  session,
  decisions: tracked.decisions,
  turns: tracked.turns,
  totals: {
    records: tracked.records,
    parse_errors: counts.parseErrors,
    turns: tracked.turns.filter((t) => t.number > 0).length,
    by_decision: tracked.by_decision,
    by_type: counts.byType,
    by_reason: tracked.by_reason,
    unknown_types: counts.unknownTypes,
    unknown_fields: counts.unknownFields
  },
  unreadable_lines: tracked.unreadable_lines
})

const increment = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1
}

/**
 * Exact identity of a message (role and every UTF-16 code unit of its text) in a few bytes.
 * Matching stays exact on purpose (a near match indexes both rather than dropping text); the
 * digest only spares keeping the text of messages that are not selected.
 */
const digestOf = (m: MessageCandidate): string =>
  createHash("sha256").update(m.role, "utf16le").update("\u0000", "utf16le").update(m.text, "utf16le").digest("base64")

export const makeTurnTracker = (options: { readonly keepDecisions: boolean }) => {
  const keepDecisions = options.keepDecisions
  const decisions: Array<RecordDecision> = []
  const turns: Array<MutableTurn> = []
  const turnsById = new Map<string, MutableTurn>()
  const byDecision = Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<Decision, number>
  const byReason: Record<string, number> = {}
  const unreadableLines: Array<UnreadableLine> = []
  let records = 0

  const newTurn = (grouping: MutableTurn["grouping"], turnId: string | null, at: SourcePosition): MutableTurn => {
    const turn: MutableTurn = {
      number: turns.length,
      turn_id: turnId,
      grouping,
      first_line: at.line,
      first_byte: at.byte_start,
      last_line: at.line,
      records: 0,
      hasRequest: false,
      hasAssistant: false,
      completed: false,
      unmatched: new Map(),
      selected: []
    }
    turns.push(turn)
    if (turnId !== null) turnsById.set(turnId, turn)
    return turn
  }
  let current = newTurn("unassigned", null, { line: 0, byte_start: 0, byte_end: 0 })

  const isFresh = (turn: MutableTurn) => turn.number > 0 && !turn.hasRequest && !turn.hasAssistant
  /** An id-less turn that an explicit id may still claim: nothing or only its request so far. */
  const isClaimable = (turn: MutableTurn) =>
    turn.turn_id === null && turn.number > 0 && !turn.hasAssistant && !turn.completed

  /** A record names its turn: adopt the id, return to that turn, or start it. */
  const seeTurnId = (turnId: string, at: SourcePosition) => {
    if (current.turn_id === turnId) return
    if (isClaimable(current)) {
      current.turn_id = turnId
      current.grouping = "turn_id"
      turnsById.set(turnId, current)
      return
    }
    current = turnsById.get(turnId) ?? newTurn("turn_id", turnId, at)
  }

  /** A turn start marker (`task_started`/`turn_started`), with or without an id. */
  const startTurn = (turnId: string | null, at: SourcePosition) => {
    if (turnId !== null) {
      if (current.turn_id === turnId) return
      if (isClaimable(current)) return seeTurnId(turnId, at)
      current = turnsById.get(turnId) ?? newTurn("turn_id", turnId, at)
      return
    }
    if (!isFresh(current) || current.turn_id !== null) current = newTurn("task_started", null, at)
  }

  /** The current turn is over (`task_complete`): an id-less prompt after it opens a new one. */
  const completeTurn = () => {
    current.completed = true
  }

  const count = (decision: Decision, reason: string) => {
    records++
    byDecision[decision]++
    if (decision !== "index") increment(byReason, `${decision}: ${reason.replace(/ as line \d+ .*$/, "")}`)
  }

  /** Labels a record in the current turn; returns its index in `decisions` (-1 when they are not kept). */
  const record = (
    base: RecordBase,
    decision: Decision,
    reason: string,
    extra: Partial<Pick<RecordDecision, "message" | "kind" | "duplicate_of">> = {}
  ): number => {
    current.records++
    current.last_line = base.line
    if (current.records === 1) {
      current.first_line = base.line
      current.first_byte = base.byte_start
    }
    count(decision, reason)
    if (!keepDecisions) return -1
    decisions.push({ ...base, decision, reason, turn: current.number, ...extra })
    return decisions.length - 1
  }

  /** A line that is not a record: counted in the current turn, and named when among the first few. */
  const unreadable = (position: SourcePosition, reason: UnreadableReason) => {
    current.records++
    current.last_line = position.line
    const label = `unreadable line: ${reason}`
    count("unclassified", label)
    if (unreadableLines.length < UNREADABLE_LINES_KEPT) unreadableLines.push({ line: position.line, reason })
    if (!keepDecisions) return
    decisions.push({
      ...positionOf(position),
      record_type: "parse_error",
      timestamp: null,
      decision: "unclassified",
      reason: label,
      turn: current.number
    })
  }

  /** An earlier copy of the same message, in another representation, in the current turn. */
  const takeDuplicate = (m: MessageCandidate, digest: string): Remembered | null => {
    const candidates = current.unmatched.get(digest)
    if (candidates === undefined) return null
    const at = candidates.findIndex((c) => c.representation !== m.representation)
    if (at === -1) return null
    const [match] = candidates.splice(at, 1)
    if (candidates.length === 0) current.unmatched.delete(digest)
    return match ?? null
  }

  const remember = (m: MessageCandidate, digest: string, base: RecordBase, selected: SelectedEntry | null) => {
    const list = current.unmatched.get(digest) ?? []
    list.push({ representation: m.representation, source: positionOf(base), record_type: base.record_type, selected })
    current.unmatched.set(digest, list)
  }

  const select = (base: RecordBase, m: MessageCandidate, kind: MessageKind, reason: string, digest: string) => {
    const index = record(base, "index", reason, { message: m, kind })
    const entry: SelectedEntry = { base, message: m, kind, reason, decision: index, duplicates: [] }
    current.selected.push(entry)
    remember(m, digest, base, entry)
  }

  /** A message candidate: a copy of an earlier one, context, a request, an assistant message, or unknown. */
  const message = (base: RecordBase, m: MessageCandidate, contextKind: string | null, subagent: string | null) => {
    const digest = digestOf(m)
    const original = takeDuplicate(m, digest)
    if (original !== null) {
      record(base, "duplicate", `same ${m.role} message as line ${original.source.line} (${original.record_type})`, {
        message: m,
        duplicate_of: original.source
      })
      original.selected?.duplicates.push(positionOf(base))
      return
    }
    if (m.role === "developer" || m.role === "system") {
      record(base, "context_only", `${m.role} instructions`, { message: m })
      return remember(m, digest, base, null)
    }
    if (contextKind !== null) {
      record(base, "context_only", `injected context: ${contextKind}`, { message: m })
      return remember(m, digest, base, null)
    }
    if (m.text.trim() === "") {
      record(base, "excluded", "message without text", { message: m })
      return remember(m, digest, base, null)
    }
    if (m.role === "user") {
      const explicitOpen = current.turn_id !== null && !current.completed
      if (!explicitOpen && (current.number === 0 || current.hasRequest || current.hasAssistant || current.completed)) {
        current = newTurn("user_prompt", null, base)
      }
      current.hasRequest = true
      const what = subagent !== null ? `task prompt from the parent session (${subagent} sub-agent)` : "request"
      const reason =
        m.omitted_context === undefined ? what : `${what} (left out injected context: ${m.omitted_context.join(", ")})`
      return select(base, m, "request", reason, digest)
    }
    if (m.role === "assistant") {
      current.hasAssistant = true
      const kind: MessageKind = m.phase === "final_answer" ? "final_answer" : "commentary"
      const reason =
        m.phase === "final_answer"
          ? "final answer"
          : m.phase === null
            ? "assistant message"
            : `assistant ${m.phase.replaceAll("_", " ")}`
      return select(base, m, kind, reason, digest)
    }
    record(base, "unclassified", `message from role ${m.role} is not interpreted`, { message: m })
    remember(m, digest, base, null)
  }

  const finish = (): TrackedTurns => {
    const finalTurns: Array<Turn> = turns.map((turn) => {
      // Without phases (older releases), the last assistant message of a turn is its answer.
      const assistants = turn.selected.filter((s) => s.message.role === "assistant")
      const anyPhase = assistants.some((s) => s.message.phase != null)
      const last = assistants[assistants.length - 1]
      if (!anyPhase && last !== undefined && turn.number > 0) {
        last.kind = "final_answer"
        last.reason = "final answer (last assistant message, no phase)"
        const d = decisions[last.decision]
        if (d !== undefined) decisions[last.decision] = { ...d, kind: last.kind, reason: last.reason }
      }
      const messages: Array<SelectedMessage> = turn.selected.map((s) => ({
        kind: s.kind,
        role: s.message.role,
        text: s.message.text,
        phase: s.message.phase,
        reason: s.reason,
        record_type: s.base.record_type,
        timestamp: s.base.timestamp,
        source: positionOf(s.base),
        duplicates: s.duplicates
      }))
      const flags: Array<TurnFlag> = []
      if (turn.number > 0) {
        if (!messages.some((m) => m.kind === "request")) flags.push("no_request")
        if (!messages.some((m) => m.kind === "final_answer")) flags.push("no_answer")
      }
      return {
        number: turn.number,
        turn_id: turn.turn_id,
        grouping: turn.grouping,
        first_line: turn.first_line,
        first_byte: turn.first_byte,
        last_line: turn.last_line,
        records: turn.records,
        messages,
        flags
      }
    })
    return {
      turns: finalTurns,
      decisions,
      records,
      by_decision: byDecision,
      by_reason: byReason,
      unreadable_lines: unreadableLines
    }
  }

  return { record, unreadable, message, startTurn, seeTurnId, completeTurn, finish }
}

/** A record as a format's `interpret` reads it alone: a fixed label, or a message candidate. */
export type Interpreted<M> =
  | { readonly _tag: "Fixed"; readonly decision: Decision; readonly reason: string }
  | { readonly _tag: "Message"; readonly message: M }

/**
 * The message candidate of an interpreted record, or undefined once a fixed label has been
 * recorded for it: what is left to a format's classifier is only what it does with a message.
 */
export const candidateOf = <M>(
  tracker: Pick<ReturnType<typeof makeTurnTracker>, "record">,
  base: RecordBase,
  interpreted: Interpreted<M>
): M | undefined => {
  if (interpreted._tag === "Message") return interpreted.message
  tracker.record(base, interpreted.decision, interpreted.reason)
  return undefined
}
