import { Option, Schema } from "effect"
import type { Decision, MessageCandidate } from "./classification.js"

/**
 * The Claude Code record tables: what each line of a Claude Code transcript
 * (`~/.claude/projects/<cwd with / as ->/<session id>.jsonl`) is, one record at a time, with no
 * memory of the records around it. Turns and the selection of messages are the turn state
 * machine's business (`turn-tracker.ts`); `claude-classify.ts` joins the two.
 *
 * A line is `{type, sessionId, uuid, parentUuid, isSidechain, cwd, version, timestamp, ...}`;
 * conversation lines (`user`, `assistant`) carry `message: {role, content}`, where content is a
 * string or an array of blocks (`text`, `thinking`, `tool_use`, `tool_result`, `image`, ...).
 * Claude Code streams an assistant message as several lines with the same `message.id`, one
 * content block each. Every schema is partial on purpose: unknown fields are kept by the record
 * and ignored here, and a line that does not match is `unclassified`, never rejected.
 */

const Block = Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.Unknown) })
const Content = Schema.Union(Schema.String, Schema.Array(Schema.Unknown))

export const ClaudeMessage = Schema.Struct({
  role: Schema.optional(Schema.String),
  content: Content,
  model: Schema.optional(Schema.String)
})
export type ClaudeMessage = typeof ClaudeMessage.Type

const decodeOption =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (input: unknown): Option.Option<A> =>
    Schema.decodeUnknownOption(schema)(input)

const decodeMessage = decodeOption(ClaudeMessage)
const decodeBlock = decodeOption(Block)
const decodeTyped = decodeOption(Schema.Struct({ type: Schema.String }))

/** Line types Claude Code writes that this version knows; others are counted as unknown. */
const CONVERSATION = new Set(["user", "assistant"])
/** Session and UI bookkeeping: titles, queue, file snapshots, modes. */
const BOOKKEEPING = new Set([
  "queue-operation",
  "file-history-snapshot",
  "last-prompt",
  "atis-latch",
  "custom-title",
  "ai-title",
  "agent-name",
  "agent-color",
  "agent-setting",
  "tag",
  "pr-link",
  "mode",
  "permission-mode",
  "worktree-state",
  "attribution-snapshot",
  "speculation-accept",
  "task-summary",
  "marble-origami-commit",
  "marble-origami-snapshot"
])
/** Copies of what was sent to the model (the request, its blobs and its shape): never indexed. */
const API_REQUEST = new Set(["api-request", "api-request-blob", "api-request-shape"])
export const KNOWN_TYPES: ReadonlySet<string> = new Set([
  ...CONVERSATION,
  ...BOOKKEEPING,
  ...API_REQUEST,
  "summary",
  "system",
  "attachment",
  "progress",
  "cost-state",
  "content-replacement"
])

/**
 * The line types whose fields are the conversation's envelope: on these, a field not listed in
 * `KNOWN_ENVELOPE_FIELDS` is counted as unknown (and kept). Other types (API request copies, cost
 * state, bookkeeping) are decided by their type, whatever fields they carry.
 */
export const ENVELOPE_TYPES: ReadonlySet<string> = new Set(["user", "assistant", "attachment", "system", "summary"])

/** Envelope fields Claude Code writes; any other is counted as unknown (and kept). */
export const KNOWN_ENVELOPE_FIELDS: ReadonlySet<string> = new Set([
  "type",
  "subtype",
  "uuid",
  "parentUuid",
  "logicalParentUuid",
  "leafUuid",
  "isSidechain",
  "isMeta",
  "isCompactSummary",
  "isVisibleInTranscriptOnly",
  "isApiErrorMessage",
  "userType",
  "entrypoint",
  "cwd",
  "sessionId",
  "agentId",
  "slug",
  "version",
  "gitBranch",
  "timestamp",
  "message",
  "requestId",
  "toolUseResult",
  "sourceToolUseID",
  "sourceToolAssistantUUID",
  "thinkingMetadata",
  "todos",
  "attachment",
  "rendered",
  "renderedRole",
  "content",
  "operation",
  "summary",
  "messageId",
  "snapshot",
  "isSnapshotUpdate",
  "level",
  "compactMetadata",
  "promptId",
  "permissionMode",
  "promptSource",
  "sentAtMs",
  "rowSource",
  "turnOrigin",
  "turnPosition",
  "apiBlockIndex",
  "requestRef",
  "requestedModel",
  "promptCacheRequested",
  "thinkingDurationMs",
  "thinkingDisplay",
  "data",
  "toolUseID",
  "parentToolUseID",
  "error",
  "durationMs",
  "hookInfos",
  "hookErrors",
  "preventedContinuation",
  "stopReason",
  "hasOutput",
  "renderedBesideToolResult",
  "effort",
  "perTurnEffort",
  "madeBy",
  "mcpMeta",
  "imagePasteIds",
  "planContent"
])

/** Types decided by their line type alone: a long one may be checked in place and passed on. */
const BY_TYPE: ReadonlySet<string> = new Set([
  ...API_REQUEST,
  "file-history-snapshot",
  "cost-state",
  "progress",
  "content-replacement",
  "attachment"
])

/** Whether `interpret` decides a record of this line type without looking into it. */
export const decidedByType = (type: string, _payloadType: string | null): boolean => BY_TYPE.has(type)

/** What one record is, before turn bookkeeping: a fixed label, or a message candidate. */
export type Interpretation =
  | { readonly _tag: "Fixed"; readonly decision: Decision; readonly reason: string }
  | { readonly _tag: "Message"; readonly message: MessageCandidate }

const fixed = (decision: Decision, reason: string): Interpretation => ({ _tag: "Fixed", decision, reason })

/**
 * Wrappers Claude Code writes as user text that the person did not type as a prompt: slash
 * commands and their output, `!` shell commands and their output, reminders it injects. Order
 * matters only for the label.
 */
const USER_WRAPPERS: ReadonlyArray<readonly [string, Decision, string]> = [
  ["<system-reminder>", "context_only", "injected context: system reminder"],
  ["<command-name>", "context_only", "slash command"],
  ["<command-message>", "context_only", "slash command"],
  ["<command-args>", "context_only", "slash command"],
  ["<local-command-stdout>", "excluded", "output of a local command"],
  ["<local-command-stderr>", "excluded", "output of a local command"],
  ["<local-command-caveat>", "context_only", "injected context: local command caveat"],
  ["<bash-input>", "context_only", "shell command typed by the user"],
  ["<bash-stdout>", "excluded", "output of a shell command"],
  ["<bash-stderr>", "excluded", "output of a shell command"],
  ["<task-notification>", "context_only", "injected context: background task notification"],
  ["<user-memory-input>", "context_only", "memory note typed by the user"],
  ["[Request interrupted by user", "metadata", "interruption marker"]
]

/** What a piece of user text is when it is not the person's own words, or null when it is. */
export const userWrapperOf = (text: string): { readonly decision: Decision; readonly reason: string } | null => {
  const start = text.trimStart()
  for (const [marker, decision, reason] of USER_WRAPPERS) if (start.startsWith(marker)) return { decision, reason }
  return null
}

/** Attachment types and what they are (all injected context; none is the person's prompt). */
const ATTACHMENTS: Readonly<Record<string, string>> = {
  hook_additional_context: "hook context (blctx's own recall among them): never indexed",
  environment: "environment",
  date: "date",
  skill_listing: "skill list",
  agent_listing_delta: "agent list",
  deferred_tools_delta: "tool list",
  prompt_snapshot: "system prompt snapshot",
  model: "model identity",
  session_context: "session context",
  remote_session_change: "attribution settings",
  todo: "todo list",
  plan_mode: "plan mode instructions",
  critical_system_reminder: "system reminder",
  nested_memory: "memory file",
  file: "file contents",
  edited_text_file: "edited file",
  opened_file_in_ide: "file opened in the IDE",
  selected_lines_in_ide: "lines selected in the IDE",
  diagnostics: "diagnostics",
  queued_command: "queued command",
  hook_success: "hook output",
  hook_non_blocking_error: "hook output",
  hook_blocking_error: "hook output",
  hook_stopped_continuation: "hook output",
  hook_cancelled: "hook output"
}

/** The type of an `attachment` record's attachment, or null. */
const attachmentTypeOf = (attachment: unknown): string | null =>
  Option.match(decodeTyped(attachment), { onNone: () => null, onSome: (a) => a.type })

/** The label a record is counted under: `type`, plus its attachment type, system subtype or first block. */
export const recordTypeOf = (entry: { readonly type: string; readonly [key: string]: unknown }): string => {
  switch (entry.type) {
    case "attachment": {
      const sub = attachmentTypeOf(entry.attachment)
      return sub === null ? "attachment" : `attachment/${sub}`
    }
    case "system":
      return typeof entry.subtype === "string" ? `system/${entry.subtype}` : "system"
    case "user":
    case "assistant": {
      const message = decodeMessage(entry.message)
      if (Option.isNone(message)) return entry.type
      const content = message.value.content
      if (typeof content === "string") return `${entry.type}/text`
      const first = content.length === 0 ? Option.none() : decodeBlock(content[0])
      return Option.match(first, { onNone: () => entry.type, onSome: (b) => `${entry.type}/${b.type}` })
    }
    default:
      return entry.type
  }
}

const REASONING = new Set(["thinking", "redacted_thinking"])
const TOOL_CALLS = new Set(["tool_use", "server_tool_use", "mcp_tool_use"])
const TOOL_OUTPUTS = new Set([
  "tool_result",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "mcp_tool_result"
])
const NO_TEXT = new Set(["image", "document"])

interface Blocks {
  readonly texts: ReadonlyArray<string>
  readonly types: ReadonlySet<string>
  readonly unknown: boolean
}

const blocksOf = (content: ReadonlyArray<unknown>): Blocks => {
  const texts: Array<string> = []
  const types = new Set<string>()
  let unknown = false
  for (const part of content) {
    const block = decodeBlock(part)
    if (Option.isNone(block)) {
      unknown = true
      continue
    }
    const { type, text } = block.value
    types.add(type)
    if (type === "text" && typeof text === "string") texts.push(text)
    else if (!REASONING.has(type) && !TOOL_CALLS.has(type) && !TOOL_OUTPUTS.has(type) && !NO_TEXT.has(type)) {
      unknown = true
    }
  }
  return { texts, types, unknown }
}

const someOf = (types: ReadonlySet<string>, set: ReadonlySet<string>) => [...types].some((t) => set.has(t))

const userMessage = (entry: Readonly<Record<string, unknown>>, content: ClaudeMessage["content"]): Interpretation => {
  if (entry.isCompactSummary === true) return fixed("context_only", "compaction summary written by the model")
  if (entry.isMeta === true) return fixed("context_only", "meta message written by Claude Code (isMeta)")
  if (typeof content === "string") {
    const wrapper = userWrapperOf(content)
    if (wrapper !== null) return fixed(wrapper.decision, wrapper.reason)
    return { _tag: "Message", message: { role: "user", text: content, phase: null, representation: "record" } }
  }
  const blocks = blocksOf(content)
  if (someOf(blocks.types, TOOL_OUTPUTS)) return fixed("excluded", "tool result")
  const own: Array<string> = []
  const omitted: Array<string> = []
  for (const text of blocks.texts) {
    const wrapper = userWrapperOf(text)
    if (wrapper === null) own.push(text)
    else omitted.push(wrapper.reason.replace(/^injected context: /, ""))
  }
  if (own.length === 0) {
    if (blocks.texts.length > 0) {
      const wrapper = userWrapperOf(blocks.texts[0] ?? "")
      if (wrapper !== null) return fixed(wrapper.decision, wrapper.reason)
    }
    if (blocks.unknown) return fixed("unclassified", "user message with content blocks this version does not know")
    return fixed("excluded", "message without text")
  }
  const message: MessageCandidate =
    omitted.length > 0
      ? { role: "user", text: own.join("\n"), phase: null, representation: "record", omitted_context: omitted }
      : { role: "user", text: own.join("\n"), phase: null, representation: "record" }
  return { _tag: "Message", message }
}

const assistantMessage = (entry: Readonly<Record<string, unknown>>, message: ClaudeMessage): Interpretation => {
  if (entry.isApiErrorMessage === true) return fixed("excluded", "API error notice written by Claude Code")
  if (message.model === "<synthetic>") return fixed("excluded", "synthetic message written by Claude Code")
  const content = message.content
  if (typeof content === "string") {
    return { _tag: "Message", message: { role: "assistant", text: content, phase: null, representation: "record" } }
  }
  const blocks = blocksOf(content)
  if (blocks.texts.length > 0) {
    return {
      _tag: "Message",
      message: { role: "assistant", text: blocks.texts.join("\n"), phase: null, representation: "record" }
    }
  }
  if (blocks.unknown) return fixed("unclassified", "assistant content blocks this version does not know")
  if (someOf(blocks.types, TOOL_CALLS)) return fixed("excluded", "tool call")
  if (someOf(blocks.types, TOOL_OUTPUTS)) return fixed("excluded", "tool output")
  if (someOf(blocks.types, REASONING)) return fixed("excluded", "reasoning")
  return fixed("excluded", "message without text")
}

const SYSTEM_SUBTYPES: Readonly<Record<string, readonly [Decision, string]>> = {
  compact_boundary: ["metadata", "compaction boundary"],
  microcompact_boundary: ["metadata", "compaction boundary"],
  turn_duration: ["metadata", "turn bookkeeping"],
  api_error: ["excluded", "diagnostic notice"],
  informational: ["excluded", "diagnostic notice"],
  local_command: ["excluded", "output of a local command"],
  stop_hook_summary: ["excluded", "hook output"]
}

/**
 * What a record is, from the record alone. (A sub-agent's record inside its parent's file, which
 * older releases wrote, is decided by the classifier, which knows whose file it is.)
 */
export const interpret = (entry: Readonly<Record<string, unknown>> & { readonly type: string }): Interpretation => {
  switch (entry.type) {
    case "user":
    case "assistant": {
      const message = decodeMessage(entry.message)
      if (Option.isNone(message)) return fixed("unclassified", `${entry.type} record without a message content`)
      return entry.type === "user" ? userMessage(entry, message.value.content) : assistantMessage(entry, message.value)
    }
    case "summary":
      return typeof entry.summary === "string"
        ? fixed("context_only", "compaction summary written by the model (summary record)")
        : fixed("unclassified", "summary record without a summary text")
    case "system": {
      const known = typeof entry.subtype === "string" ? SYSTEM_SUBTYPES[entry.subtype] : undefined
      if (known !== undefined) return fixed(known[0], known[1])
      return fixed("excluded", "Claude Code system notice")
    }
    case "attachment": {
      const sub = attachmentTypeOf(entry.attachment)
      const what = sub === null ? undefined : ATTACHMENTS[sub]
      if (sub === "hook_additional_context") return fixed("context_only", `injected context: ${what}`)
      return fixed("context_only", `injected context: attachment${what === undefined ? "" : ` (${what})`}`)
    }
    case "progress":
      return fixed("excluded", "tool progress")
    case "cost-state":
      return fixed("excluded", "token and cost counts")
    case "content-replacement":
      return fixed("excluded", "tool output replaced to save context")
    default:
      if (API_REQUEST.has(entry.type)) return fixed("excluded", "API request record (a copy of the model's input)")
      if (BOOKKEEPING.has(entry.type)) return fixed("metadata", "session bookkeeping")
      return fixed("unclassified", `record type ${entry.type} is not interpreted`)
  }
}

/** Whether a conversation record is a sub-agent's (`isSidechain: true`). */
export const isSidechain = (entry: Readonly<Record<string, unknown>>): boolean => entry.isSidechain === true

/** A string field of the envelope, or null. */
export const stringField = (entry: Readonly<Record<string, unknown>>, key: string): string | null => {
  const value = entry[key]
  return typeof value === "string" && value !== "" ? value : null
}
