import type { SourcePosition, UnreadableReason } from "./record.js"

/**
 * What the classifier decided for one record.
 * - `index`: searchable: the user's requests, assistant commentary/progress and final answers.
 * - `context_only`: injected context (AGENTS.md, environment, skills, developer instructions).
 * - `excluded`: reasoning, tool calls and outputs, token counts.
 * - `duplicate`: the same message in another representation of the same turn.
 * - `metadata`: session and turn bookkeeping.
 * - `unclassified`: shapes this version does not interpret, and unreadable lines.
 */
export type Decision = "index" | "context_only" | "excluded" | "duplicate" | "metadata" | "unclassified"
export const DECISIONS: ReadonlyArray<Decision> = [
  "index",
  "context_only",
  "excluded",
  "duplicate",
  "metadata",
  "unclassified"
]

/**
 * Which copy of a message a record is: Codex writes the UI copy and the model copy; `record` is a
 * format that writes each message once (Claude Code), so no copy of it is ever a duplicate.
 */
export type Representation = "event_msg" | "response_item" | "turn_item" | "record"

export type MessageKind = "request" | "commentary" | "final_answer"

/** A user/assistant/developer message found in a record (a candidate, not approved data). */
export interface MessageCandidate {
  readonly role: string
  /** The message's text parts joined by newlines (injected-context parts left out of a request). */
  readonly text: string
  readonly phase: string | null
  readonly representation: Representation
  /** Kinds of injected context found in other parts of the same user message and left out. */
  readonly omitted_context?: ReadonlyArray<string>
}

export interface RecordDecision extends SourcePosition {
  /** `type` of the line, plus `/payload.type` when there is one; `parse_error` for bad lines. */
  readonly record_type: string
  readonly timestamp: string | null
  readonly decision: Decision
  readonly reason: string
  /** Number of the turn this record belongs to (0 = the unassigned group). */
  readonly turn: number
  readonly message?: MessageCandidate
  readonly kind?: MessageKind
  readonly duplicate_of?: SourcePosition
}

/** One message proposed for the index: the exact searchable text and where it came from. */
export interface SelectedMessage {
  readonly kind: MessageKind
  readonly role: string
  readonly text: string
  readonly phase: string | null
  readonly reason: string
  readonly record_type: string
  /** The `timestamp` of its source line, as written. */
  readonly timestamp: string | null
  readonly source: SourcePosition
  readonly duplicates: ReadonlyArray<SourcePosition>
}

export type TurnFlag = "no_request" | "no_answer"

export interface Turn {
  readonly number: number
  readonly turn_id: string | null
  /** How the turn was delimited: an explicit turn id, a `task_started` marker, a user prompt, or none. */
  readonly grouping: "turn_id" | "task_started" | "user_prompt" | "unassigned"
  readonly first_line: number
  /** Offset of the first byte of `first_line`: where a reader resumes to classify this turn again. */
  readonly first_byte: number
  readonly last_line: number
  readonly records: number
  readonly messages: ReadonlyArray<SelectedMessage>
  readonly flags: ReadonlyArray<TurnFlag>
}

export interface SessionInfo {
  readonly id: string | null
  readonly cwd: string | null
  readonly cli_version: string | null
  readonly originator: string | null
  readonly started_at: string | null
  readonly forked_from_id: string | null
  /** The sub-agent kind when this session was spawned by another one (e.g. `review`). */
  readonly subagent: string | null
  /**
   * In a forked session: the line where the history copied from the parent starts (the parent's
   * replayed `session_meta`). Its messages also live in the parent's own file.
   */
  readonly parent_history_from_line: number | null
  /**
   * A sub-agent's session: the session that spawned it (Claude Code writes a sub-agent's file under
   * its parent's `<session id>/subagents/`). Absent or null otherwise.
   */
  readonly parent_session_id?: string | null
}

export interface ClassificationTotals {
  readonly records: number
  readonly parse_errors: number
  readonly turns: number
  readonly by_decision: Readonly<Record<Decision, number>>
  readonly by_type: Readonly<Record<string, number>>
  /** `decision: reason` → count, for everything not indexed. */
  readonly by_reason: Readonly<Record<string, number>>
  /** Line types this version does not know, and envelope fields it does not know: kept and counted. */
  readonly unknown_types: Readonly<Record<string, number>>
  readonly unknown_fields: Readonly<Record<string, number>>
}

/** A line that could not be read as a record, as the problem summary names it. */
export interface UnreadableLine {
  readonly line: number
  readonly reason: UnreadableReason
}

/**
 * What a classification keeps without a decision per record (the lean mode the importer uses):
 * turns with their selected messages, the session, the totals, and the first unreadable lines.
 * Its size grows with the messages proposed for the index, never with the records set aside.
 */
export interface TranscriptSummary {
  readonly session: SessionInfo | null
  /** Turn 0 is the unassigned group (records before any turn starts); it may be empty. */
  readonly turns: ReadonlyArray<Turn>
  readonly totals: ClassificationTotals
  /** The first `UNREADABLE_LINES_KEPT` unreadable lines, in file order; `totals.parse_errors` counts them all. */
  readonly unreadable_lines: ReadonlyArray<UnreadableLine>
}

/** Every record's decision as well: what `blctx explore` shows. */
export interface TranscriptClassification extends TranscriptSummary {
  readonly decisions: ReadonlyArray<RecordDecision>
}
