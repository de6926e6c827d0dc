import { Option } from "effect"
import type {
  Decision,
  MessageCandidate,
  MessageKind,
  RecordDecision,
  Representation,
  SelectedMessage,
  SessionInfo,
  TranscriptClassification,
  Turn,
  TurnFlag
} from "./classification.js"
import { DECISIONS } from "./classification.js"
import {
  decodeCompacted,
  decodeEventAgentMessage,
  decodeEventUserMessage,
  decodeItemCompleted,
  decodePayloadType,
  decodeResponseMessage,
  decodeSessionMeta,
  decodeTurnScoped,
  subagentOf,
  textParts
} from "./codex-payloads.js"
import { injectedContextKind } from "./injected-context.js"
import { positionOf, type SourcePosition, type TranscriptRecord } from "./record.js"

const KNOWN_ENVELOPE_FIELDS = new Set(["timestamp", "type", "payload", "ordinal"])
const KNOWN_TYPES = new Set([
  "session_meta",
  "response_item",
  "event_msg",
  "turn_context",
  "compacted",
  "world_state",
  "token_usage_record",
  "inter_agent_communication",
  "inter_agent_communication_metadata",
  "retained_context",
  "security_risk_score",
  "realtime_item"
])

const EVENT_METADATA = new Set([
  "task_started",
  "turn_started",
  "task_complete",
  "turn_complete",
  "turn_aborted",
  "thread_rolled_back",
  "context_compacted",
  "entered_review_mode",
  "exited_review_mode",
  "thread_goal_updated",
  "thread_settings_applied",
  "thread_name_updated",
  "session_configured"
])
const EVENT_REASONING = new Set([
  "agent_reasoning",
  "agent_reasoning_raw_content",
  "agent_reasoning_section_break",
  "agent_reasoning_delta",
  "agent_reasoning_raw_content_delta"
])
const EVENT_TOOL = new Set([
  "exec_command_begin",
  "exec_command_end",
  "exec_command_output_delta",
  "patch_apply_begin",
  "patch_apply_end",
  "mcp_tool_call_begin",
  "mcp_tool_call_end",
  "web_search_begin",
  "web_search_end",
  "image_generation_begin",
  "image_generation_end",
  "view_image_tool_call",
  "dynamic_tool_call_request",
  "dynamic_tool_call_response",
  "sub_agent_activity",
  "turn_diff",
  "plan_update",
  "plan_delta",
  "terminal_interaction"
])
const EVENT_DIAGNOSTIC = new Set(["error", "warning", "stream_error", "guardian_warning", "deprecation_notice"])
const RESPONSE_TOOL_CALL = new Set([
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "web_search_call",
  "tool_search_call",
  "image_generation_call"
])
const RESPONSE_TOOL_OUTPUT = new Set(["function_call_output", "custom_tool_call_output", "tool_search_output"])
const RESPONSE_COMPACTION = new Set(["compaction", "context_compaction", "compaction_summary"])
const ITEM_TOOL = new Set([
  "CommandExecution",
  "FileChange",
  "FunctionCallOutput",
  "McpToolCall",
  "WebSearch",
  "ImageView",
  "ImageGeneration",
  "DynamicToolCall",
  "CollabAgentToolCall",
  "SubAgentActivity",
  "Plan",
  "Extension"
])
const ITEM_METADATA = new Set(["ContextCompaction", "EnteredReviewMode", "ExitedReviewMode"])

interface MutableTurn {
  number: number
  turn_id: string | null
  grouping: Turn["grouping"]
  first_line: number
  last_line: number
  records: number
  hasRequest: boolean
  hasAssistant: boolean
  completed: boolean
  /** Per representation: candidates not yet matched by a copy in another representation. */
  unmatched: Map<string, Array<{ representation: Representation; index: number }>>
  selected: Array<number>
}

/** What one record is, before turn bookkeeping: a fixed label, or a message candidate. */
type Interpretation =
  | { readonly _tag: "Fixed"; readonly decision: Decision; readonly reason: string; readonly turnId?: string | null }
  | {
      readonly _tag: "Message"
      readonly message: MessageCandidate
      readonly turnId?: string | null
    }
  | { readonly _tag: "TurnStart"; readonly turnId: string | null }

const fixed = (decision: Decision, reason: string, turnId?: string | null): Interpretation =>
  turnId === undefined ? { _tag: "Fixed", decision, reason } : { _tag: "Fixed", decision, reason, turnId }

const payloadTypeOf = (payload: unknown): string | null =>
  Option.match(decodePayloadType(payload), { onNone: () => null, onSome: (p) => p.type })

const turnIdOf = (payload: unknown): string | null =>
  Option.match(decodeTurnScoped(payload), { onNone: () => null, onSome: (p) => p.turn_id ?? null })

/**
 * A message from its text parts. A user message mixing injected-context parts with your own text
 * keeps only your text (and names what it left out); one made only of context stays whole.
 */
const candidate = (
  role: string,
  parts: ReadonlyArray<string>,
  phase: string | null,
  representation: Representation
): MessageCandidate => {
  if (role === "user") {
    const kinds = parts.map(injectedContextKind)
    const own = parts.filter((_, i) => kinds[i] === null)
    const omitted = kinds.filter((k): k is string => k !== null)
    if (own.length > 0 && omitted.length > 0) {
      return { role, text: own.join("\n"), phase, representation, omitted_context: omitted }
    }
  }
  return { role, text: parts.join("\n"), phase, representation }
}

const interpretEvent = (payload: unknown, subtype: string | null): Interpretation => {
  if (subtype === "user_message") {
    return Option.match(decodeEventUserMessage(payload), {
      onNone: () => fixed("unclassified", "user_message without a message text"),
      onSome: (m) => ({
        _tag: "Message",
        message: { role: "user", text: m.message, phase: null, representation: "event_msg" }
      })
    })
  }
  if (subtype === "agent_message") {
    return Option.match(decodeEventAgentMessage(payload), {
      onNone: () => fixed("unclassified", "agent_message without a message text"),
      onSome: (m) => ({
        _tag: "Message",
        message: { role: "assistant", text: m.message, phase: m.phase ?? null, representation: "event_msg" }
      })
    })
  }
  if (subtype === "item_completed") {
    return Option.match(decodeItemCompleted(payload), {
      onNone: () => fixed("unclassified", "item_completed of an unknown shape"),
      onSome: (event): Interpretation => {
        const turnId = event.turn_id ?? null
        const itemType = event.item.type
        if (itemType === "UserMessage" || itemType === "AgentMessage") {
          return {
            _tag: "Message",
            turnId,
            message: candidate(
              itemType === "UserMessage" ? "user" : "assistant",
              textParts(event.item.content),
              event.item.phase ?? null,
              "turn_item"
            )
          }
        }
        if (itemType === "Reasoning") return fixed("excluded", "reasoning", turnId)
        if (itemType === "HookPrompt") return fixed("context_only", "hook prompt", turnId)
        if (ITEM_TOOL.has(itemType)) return fixed("excluded", "tool traffic", turnId)
        if (ITEM_METADATA.has(itemType)) return fixed("metadata", "turn bookkeeping", turnId)
        return fixed("unclassified", `turn item ${itemType} is not interpreted`, turnId)
      }
    })
  }
  if (subtype === "task_started" || subtype === "turn_started") return { _tag: "TurnStart", turnId: turnIdOf(payload) }
  if (subtype !== null && EVENT_METADATA.has(subtype)) return fixed("metadata", "turn bookkeeping", turnIdOf(payload))
  if (subtype === "token_count") return fixed("excluded", "token counts")
  if (subtype !== null && EVENT_REASONING.has(subtype)) return fixed("excluded", "reasoning")
  if (subtype !== null && EVENT_TOOL.has(subtype)) return fixed("excluded", "tool traffic")
  if (subtype !== null && EVENT_DIAGNOSTIC.has(subtype)) return fixed("excluded", "diagnostic notice")
  return fixed("unclassified", `event ${subtype ?? "(no type)"} is not interpreted`)
}

const interpretResponseItem = (payload: unknown, subtype: string | null): Interpretation => {
  if (subtype === "message") {
    return Option.match(decodeResponseMessage(payload), {
      onNone: () => fixed("unclassified", "message of an unknown shape"),
      onSome: (m): Interpretation => ({
        _tag: "Message",
        message: candidate(m.role, textParts(m.content), m.phase ?? null, "response_item")
      })
    })
  }
  if (subtype === "reasoning") return fixed("excluded", "reasoning")
  if (subtype !== null && RESPONSE_TOOL_CALL.has(subtype)) return fixed("excluded", "tool call")
  if (subtype !== null && RESPONSE_TOOL_OUTPUT.has(subtype)) return fixed("excluded", "tool output")
  if (subtype === "ghost_snapshot") return fixed("excluded", "undo snapshot")
  if (subtype !== null && RESPONSE_COMPACTION.has(subtype)) return fixed("excluded", "compaction marker")
  if (subtype === "additional_tools") return fixed("metadata", "tool list")
  return fixed("unclassified", `response item ${subtype ?? "(no type)"} is not interpreted`)
}

const interpret = (type: string, payload: unknown, subtype: string | null): Interpretation => {
  switch (type) {
    case "session_meta":
      return fixed("metadata", "session metadata")
    case "turn_context":
      return fixed("metadata", "turn settings", turnIdOf(payload))
    case "compacted":
      return Option.isSome(decodeCompacted(payload))
        ? fixed("context_only", "compaction summary written by the model")
        : fixed("unclassified", "compacted record of an unknown shape")
    case "world_state":
      return fixed("metadata", "environment state")
    case "token_usage_record":
      return fixed("excluded", "token counts")
    case "event_msg":
      return interpretEvent(payload, subtype)
    case "response_item":
      return interpretResponseItem(payload, subtype)
    default:
      return fixed("unclassified", `record type ${type} is not interpreted`)
  }
}

const increment = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1
}

/**
 * The classifier, fed one record at a time so a whole file is classified in one streaming pass
 * (the importer and `blctx explore` share it). `finish` returns the decision for every record.
 */
export const makeClassifier = () => {
  const decisions: Array<RecordDecision> = []
  const turns: Array<MutableTurn> = []
  const turnsById = new Map<string, MutableTurn>()
  const byType: Record<string, number> = {}
  const unknownTypes: Record<string, number> = {}
  const unknownFields: Record<string, number> = {}
  let session: SessionInfo | null = null
  let parseErrors = 0

  const newTurn = (grouping: MutableTurn["grouping"], turnId: string | null, line: number): MutableTurn => {
    const turn: MutableTurn = {
      number: turns.length,
      turn_id: turnId,
      grouping,
      first_line: line,
      last_line: line,
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
  let current = newTurn("unassigned", null, 0)

  const isFresh = (turn: MutableTurn) => turn.number > 0 && !turn.hasRequest && !turn.hasAssistant
  /** An id-less turn that an explicit id may still claim: nothing or only its request so far. */
  const isClaimable = (turn: MutableTurn) =>
    turn.turn_id === null && turn.number > 0 && !turn.hasAssistant && !turn.completed

  /** A record names its turn: adopt the id, return to that turn, or start it. */
  const seeTurnId = (turnId: string, line: number) => {
    if (current.turn_id === turnId) return
    if (isClaimable(current)) {
      current.turn_id = turnId
      current.grouping = "turn_id"
      turnsById.set(turnId, current)
      return
    }
    current = turnsById.get(turnId) ?? newTurn("turn_id", turnId, line)
  }

  const startTurn = (turnId: string | null, line: number) => {
    if (turnId !== null) {
      if (current.turn_id === turnId) return
      if (isClaimable(current)) return seeTurnId(turnId, line)
      current = turnsById.get(turnId) ?? newTurn("turn_id", turnId, line)
      return
    }
    if (!isFresh(current) || current.turn_id !== null) current = newTurn("task_started", null, line)
  }

  const noteSession = (payload: unknown) => {
    if (session !== null) return
    const meta = decodeSessionMeta(payload)
    if (Option.isNone(meta)) return
    const m = meta.value
    session = {
      id: m.id ?? null,
      cwd: m.cwd ?? null,
      cli_version: m.cli_version ?? null,
      originator: m.originator ?? null,
      started_at: m.timestamp ?? null,
      forked_from_id: m.forked_from_id ?? null,
      subagent: subagentOf(m.source),
      parent_history_from_line: null
    }
  }

  /** A later `session_meta` naming the session this one was forked from: the copied history starts. */
  const isReplayedParent = (payload: unknown, line: number): boolean => {
    const own = session
    if (own === null || own.forked_from_id === null || own.parent_history_from_line !== null) return false
    const meta = decodeSessionMeta(payload)
    if (Option.isNone(meta) || meta.value.id !== own.forked_from_id) return false
    session = { ...own, parent_history_from_line: line }
    return true
  }

  const push = (record: TranscriptRecord) => {
    const position = positionOf(record)
    if (record.kind === "parse_error") {
      parseErrors++
      increment(byType, "parse_error")
      current.records++
      current.last_line = record.line
      decisions.push({
        ...position,
        record_type: "parse_error",
        timestamp: null,
        decision: "unclassified",
        reason: `unreadable line: ${record.reason}`,
        turn: current.number
      })
      return
    }
    const entry = record.entry
    const subtype = payloadTypeOf(entry.payload)
    const recordType = subtype === null ? entry.type : `${entry.type}/${subtype}`
    increment(byType, recordType)
    if (!KNOWN_TYPES.has(entry.type)) increment(unknownTypes, entry.type)
    for (const key of Object.keys(entry)) if (!KNOWN_ENVELOPE_FIELDS.has(key)) increment(unknownFields, key)
    const base = { ...position, record_type: recordType, timestamp: entry.timestamp ?? null }
    if (entry.type === "session_meta") {
      if (isReplayedParent(entry.payload, record.line)) {
        addToTurn(base, "metadata", "parent session metadata: history copied by the fork starts here")
        return
      }
      noteSession(entry.payload)
    }

    const interpretation = interpret(entry.type, entry.payload, subtype)

    if (interpretation._tag === "TurnStart") {
      startTurn(interpretation.turnId, record.line)
      addToTurn(base, "metadata", "turn bookkeeping")
      return
    }
    if (interpretation.turnId !== undefined && interpretation.turnId !== null) {
      seeTurnId(interpretation.turnId, record.line)
    }
    if (interpretation._tag === "Fixed") {
      addToTurn(base, interpretation.decision, interpretation.reason)
      if (recordType === "event_msg/task_complete" || recordType === "event_msg/turn_complete") {
        current.completed = true
      }
      return
    }
    classifyMessage(base, interpretation.message)
  }

  const addToTurn = (
    base: Omit<RecordDecision, "decision" | "reason" | "turn">,
    decision: Decision,
    reason: string,
    extra: Partial<Pick<RecordDecision, "message" | "kind" | "duplicate_of">> = {}
  ) => {
    current.records++
    current.last_line = base.line
    if (current.records === 1) current.first_line = base.line
    decisions.push({ ...base, decision, reason, turn: current.number, ...extra })
    return decisions.length - 1
  }

  const keyOf = (m: MessageCandidate) => `${m.role}\u0000${m.text}`

  /** An earlier copy of the same message, in another representation, in the current turn. */
  const takeDuplicate = (m: MessageCandidate): number | null => {
    const candidates = current.unmatched.get(keyOf(m))
    if (candidates === undefined) return null
    const at = candidates.findIndex((c) => c.representation !== m.representation)
    if (at === -1) return null
    const [match] = candidates.splice(at, 1)
    return match?.index ?? null
  }

  const remember = (m: MessageCandidate, index: number) => {
    const key = keyOf(m)
    const list = current.unmatched.get(key) ?? []
    list.push({ representation: m.representation, index })
    current.unmatched.set(key, list)
  }

  const classifyMessage = (base: Omit<RecordDecision, "decision" | "reason" | "turn">, m: MessageCandidate) => {
    const original = takeDuplicate(m)
    if (original !== null) {
      const first = decisions[original]
      if (first !== undefined) {
        addToTurn(base, "duplicate", `same ${m.role} message as line ${first.line} (${first.record_type})`, {
          message: m,
          duplicate_of: positionOf(first)
        })
        return
      }
    }
    const contextKind = m.role === "user" ? injectedContextKind(m.text) : null
    if (m.role === "developer" || m.role === "system") {
      remember(m, addToTurn(base, "context_only", `${m.role} instructions`, { message: m }))
      return
    }
    if (contextKind !== null) {
      remember(m, addToTurn(base, "context_only", `injected context: ${contextKind}`, { message: m }))
      return
    }
    if (m.text.trim() === "") {
      remember(m, addToTurn(base, "excluded", "message without text", { message: m }))
      return
    }
    if (m.role === "user") {
      const explicitOpen = current.turn_id !== null && !current.completed
      if (!explicitOpen && (current.number === 0 || current.hasRequest || current.hasAssistant || current.completed)) {
        current = newTurn("user_prompt", null, base.line)
      }
      current.hasRequest = true
      const what =
        session?.subagent != null ? `task prompt from the parent session (${session.subagent} sub-agent)` : "request"
      const reason =
        m.omitted_context === undefined ? what : `${what} (left out injected context: ${m.omitted_context.join(", ")})`
      const index = addToTurn(base, "index", reason, { message: m, kind: "request" })
      current.selected.push(index)
      remember(m, index)
      return
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
      const index = addToTurn(base, "index", reason, { message: m, kind })
      current.selected.push(index)
      remember(m, index)
      return
    }
    remember(m, addToTurn(base, "unclassified", `message from role ${m.role} is not interpreted`, { message: m }))
  }

  const finish = (): TranscriptClassification => {
    const duplicatesOf = new Map<number, Array<SourcePosition>>()
    const indexByLine = new Map<number, number>()
    for (const [i, d] of decisions.entries()) indexByLine.set(d.line, i)
    for (const d of decisions) {
      if (d.duplicate_of === undefined) continue
      const target = indexByLine.get(d.duplicate_of.line)
      if (target === undefined) continue
      const list = duplicatesOf.get(target) ?? []
      list.push(positionOf(d))
      duplicatesOf.set(target, list)
    }

    const finalTurns: Array<Turn> = turns.map((turn) => {
      const selected = turn.selected.flatMap((i) => {
        const d = decisions[i]
        return d === undefined ? [] : [{ index: i, decision: d }]
      })
      // Without phases (older releases), the last assistant message of a turn is its answer.
      const assistants = selected.filter((s) => s.decision.message?.role === "assistant")
      const anyPhase = assistants.some((s) => s.decision.message?.phase != null)
      const last = assistants[assistants.length - 1]
      if (!anyPhase && last !== undefined && turn.number > 0) {
        const d = last.decision
        decisions[last.index] = {
          ...d,
          kind: "final_answer",
          reason: "final answer (last assistant message, no phase)"
        }
        last.decision = decisions[last.index] ?? d
      }
      const messages: Array<SelectedMessage> = selected.map(({ index, decision: d }) => ({
        kind: d.kind ?? "commentary",
        role: d.message?.role ?? "unknown",
        text: d.message?.text ?? "",
        phase: d.message?.phase ?? null,
        reason: d.reason,
        record_type: d.record_type,
        source: positionOf(d),
        duplicates: duplicatesOf.get(index) ?? []
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
        last_line: turn.last_line,
        records: turn.records,
        messages,
        flags
      }
    })

    const byDecision = Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<Decision, number>
    const byReason: Record<string, number> = {}
    for (const d of decisions) {
      byDecision[d.decision]++
      if (d.decision !== "index") increment(byReason, `${d.decision}: ${d.reason.replace(/ as line \d+ .*$/, "")}`)
    }
    return {
      session,
      decisions,
      turns: finalTurns,
      totals: {
        records: decisions.length,
        parse_errors: parseErrors,
        turns: finalTurns.filter((t) => t.number > 0).length,
        by_decision: byDecision,
        by_type: byType,
        by_reason: byReason,
        unknown_types: unknownTypes,
        unknown_fields: unknownFields
      }
    }
  }

  return { push, finish }
}

/** Classifies a whole transcript: every record gets a decision, a reason and a turn. */
export const classifyTranscript = (records: Iterable<TranscriptRecord>): TranscriptClassification => {
  const classifier = makeClassifier()
  for (const record of records) classifier.push(record)
  return classifier.finish()
}
