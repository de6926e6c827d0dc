import { Option } from "effect"
import type { Decision, MessageCandidate, Representation, SessionInfo } from "./classification.js"
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

/**
 * The Codex record tables: what each line `type` and `payload.type` of a rollout means, one record
 * at a time, with no memory of the records around it. Turns, duplicates and the selection of
 * messages are the turn state machine's business (`turn-tracker.ts`); `classify.ts` joins the two.
 */

/** Envelope fields Codex writes on every line; any other is counted as unknown. */
export const KNOWN_ENVELOPE_FIELDS: ReadonlySet<string> = new Set(["timestamp", "type", "payload", "ordinal"])

/** Line types this version knows (interpreted or deliberately set aside); others are counted as unknown. */
export const KNOWN_TYPES: ReadonlySet<string> = new Set([
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

/**
 * Payload types whose record is decided by its `type` and payload `type` alone: nothing else in
 * the payload (a tool's output, reasoning, token counts) changes what the record is. A reader may
 * therefore check such a line and pass it on without decoding its payload (see the importer).
 */
const RESPONSE_BY_TYPE: ReadonlySet<string> = new Set([
  ...RESPONSE_TOOL_CALL,
  ...RESPONSE_TOOL_OUTPUT,
  ...RESPONSE_COMPACTION,
  "reasoning",
  "ghost_snapshot",
  "additional_tools"
])
const EVENT_BY_TYPE: ReadonlySet<string> = new Set([
  "token_count",
  ...EVENT_REASONING,
  ...EVENT_TOOL,
  ...EVENT_DIAGNOSTIC
])
const LINE_TYPES_BY_TYPE: ReadonlySet<string> = new Set(["world_state", "token_usage_record"])

/** Whether `interpret` decides a record of this type without looking into its payload. */
export const decidedByType = (type: string, subtype: string | null): boolean => {
  if (type === "response_item") return subtype !== null && RESPONSE_BY_TYPE.has(subtype)
  if (type === "event_msg") return subtype !== null && EVENT_BY_TYPE.has(subtype)
  return LINE_TYPES_BY_TYPE.has(type)
}

/** Record types that end the current turn (an id-less prompt after them opens a new one). */
const TURN_COMPLETIONS: ReadonlySet<string> = new Set(["event_msg/task_complete", "event_msg/turn_complete"])

/** What one record is, before turn bookkeeping: a fixed label, a message candidate, or a turn start. */
export type Interpretation =
  | { readonly _tag: "Fixed"; readonly decision: Decision; readonly reason: string; readonly turnId?: string | null }
  | {
      readonly _tag: "Message"
      readonly message: MessageCandidate
      readonly turnId?: string | null
    }
  | { readonly _tag: "TurnStart"; readonly turnId: string | null }

const fixed = (decision: Decision, reason: string, turnId?: string | null): Interpretation =>
  turnId === undefined ? { _tag: "Fixed", decision, reason } : { _tag: "Fixed", decision, reason, turnId }

/** The payload's own `type`, or null when it has none. */
export const payloadTypeOf = (payload: unknown): string | null =>
  Option.match(decodePayloadType(payload), { onNone: () => null, onSome: (p) => p.type })

/** `type`, plus `/payload.type` when there is one: the label every count and decision uses. */
export const recordTypeOf = (type: string, subtype: string | null): string =>
  subtype === null ? type : `${type}/${subtype}`

/** Whether a record of this type closes its turn. */
export const completesTurn = (recordType: string): boolean => TURN_COMPLETIONS.has(recordType)

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

/** What a record of line type `type` (and payload type `subtype`) is. */
export const interpret = (type: string, payload: unknown, subtype: string | null): Interpretation => {
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

/** The session a `session_meta` payload describes, or null when the payload is not one. */
export const sessionInfoOf = (payload: unknown): SessionInfo | null =>
  Option.match(decodeSessionMeta(payload), {
    onNone: () => null,
    onSome: (m) => ({
      id: m.id ?? null,
      cwd: m.cwd ?? null,
      cli_version: m.cli_version ?? null,
      originator: m.originator ?? null,
      started_at: m.timestamp ?? null,
      forked_from_id: m.forked_from_id ?? null,
      subagent: subagentOf(m.source),
      parent_history_from_line: null
    })
  })

/** The session id a `session_meta` payload names, or null. */
export const sessionIdOf = (payload: unknown): string | null =>
  Option.match(decodeSessionMeta(payload), { onNone: () => null, onSome: (m) => m.id ?? null })
