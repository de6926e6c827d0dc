import type { Decision, MessageCandidate } from "./classification.js"

/**
 * The Gemini CLI record tables: what each line of a Gemini CLI session file
 * (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`, 0.61) is, one record at a time.
 * Turns and the selection of messages are the turn state machine's (`turn-tracker.ts`);
 * `gemini-classify.ts` joins the two and remembers what one record cannot know alone.
 *
 * The CLI appends one JSON object a line (`ChatRecordingService`) and rewrites the file only to
 * repair one it could not read back:
 * - a session header `{sessionId, projectHash, startTime, lastUpdated, kind, directories?}`,
 *   written first and again each time the session is resumed;
 * - a message `{id, timestamp, type, content, displayContent?, thoughts?, tokens?, model?,
 *   toolCalls?}` with `type` `user`, `gemini`, `info`, `error` or `warning`; `content` is a string
 *   or a list of parts (`text`, `thought`, `functionCall`, `functionResponse`, `inlineData`, ...).
 *   A message written again with the same `id` replaces the earlier copy (the CLI does so to add
 *   token counts and tool calls to the model's message);
 * - `{"$set": {...}}`: metadata updates (`lastUpdated`, `summary`, `memoryScratchpad`, ...), and
 *   `$set.messages`, the whole history as the CLI holds it (its session context, and on resume
 *   every earlier message again);
 * - `{"$rewindTo": id}`: the person took back the conversation from that message on.
 * The header, `$set` and `$rewindTo` lines have no `type`: `untypedType` names one for the reader.
 */

/** The types the reader gives the lines Gemini CLI writes without one. */
export const HEADER_TYPE = "$header"
export const SET_TYPE = "$set"
export const REWIND_TYPE = "$rewindTo"

type Entry = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Entry =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The type of a line written without one: a header, a `$set` or a `$rewindTo`; null for anything else. */
export const untypedType = (record: Entry): string | null => {
  if (typeof record.$rewindTo === "string") return REWIND_TYPE
  if (isObject(record.$set)) return SET_TYPE
  if (typeof record.sessionId === "string" && typeof record.projectHash === "string") return HEADER_TYPE
  return null
}

const MESSAGE_TYPES = new Set(["user", "gemini"])
/** Notices the CLI records beside the conversation and never sends to the model. */
const NOTICE_TYPES = new Set(["info", "error", "warning"])
export const KNOWN_TYPES: ReadonlySet<string> = new Set([
  ...MESSAGE_TYPES,
  ...NOTICE_TYPES,
  HEADER_TYPE,
  SET_TYPE,
  REWIND_TYPE
])

/** Fields of a message record this version knows; any other is counted as unknown (and kept). */
export const KNOWN_MESSAGE_FIELDS: ReadonlySet<string> = new Set([
  "id",
  "timestamp",
  "type",
  "content",
  "displayContent",
  "thoughts",
  "tokens",
  "model",
  "toolCalls"
])
/** Fields of a session header this version knows. */
export const KNOWN_HEADER_FIELDS: ReadonlySet<string> = new Set([
  "type",
  "sessionId",
  "projectHash",
  "startTime",
  "lastUpdated",
  "kind",
  "directories",
  "summary",
  "memoryScratchpad",
  "messages"
])

/** A string field of a record, or null. */
export const stringField = (entry: Entry, key: string): string | null => {
  const value = entry[key]
  return typeof value === "string" && value !== "" ? value : null
}

/** The parts of a message's content: a string is one text part; anything else is no part. */
const partsOf = (content: unknown): ReadonlyArray<unknown> | null =>
  typeof content === "string" ? [{ text: content }] : Array.isArray(content) ? content : null

type PartKind = "text" | "thought" | "tool_call" | "tool_output" | "media" | "unknown"

const TOOL_CALL_KEYS = ["functionCall", "executableCode", "toolCall"]
const TOOL_OUTPUT_KEYS = ["functionResponse", "codeExecutionResult", "toolResponse"]
const MEDIA_KEYS = ["inlineData", "fileData"]

/** What one part of a content list is. */
const partKind = (part: unknown): PartKind => {
  if (!isObject(part)) return "unknown"
  if (typeof part.text === "string") return part.thought === true ? "thought" : "text"
  if (TOOL_CALL_KEYS.some((k) => part[k] !== undefined)) return "tool_call"
  if (TOOL_OUTPUT_KEYS.some((k) => part[k] !== undefined)) return "tool_output"
  if (MEDIA_KEYS.some((k) => part[k] !== undefined)) return "media"
  return "unknown"
}

/** The label a record is counted under: its type, plus its first part's kind for messages. */
export const recordTypeOf = (entry: Entry & { readonly type: string }): string => {
  if (entry.type === SET_TYPE)
    return isObject(entry.$set) && Array.isArray(entry.$set.messages) ? "$set/messages" : "$set"
  if (!MESSAGE_TYPES.has(entry.type)) return entry.type
  const parts = partsOf(entry.content)
  const first = parts?.find((p) => partKind(p) !== "text" || (p as { text: string }).text !== "")
  if (first === undefined)
    return Array.isArray(entry.toolCalls) && entry.toolCalls.length > 0 ? `${entry.type}/toolCalls` : entry.type
  return `${entry.type}/${partKind(first)}`
}

/** What one record is, before turn bookkeeping: a fixed label, or a message candidate. */
export type Interpretation =
  | { readonly _tag: "Fixed"; readonly decision: Decision; readonly reason: string }
  | { readonly _tag: "Message"; readonly message: MessageCandidate }

const fixed = (decision: Decision, reason: string): Interpretation => ({ _tag: "Fixed", decision, reason })

const HOOK_CONTEXT_NAME = "hook context (blctx's own recall among them): never indexed"
/** Context the CLI or a hook adds to the person's message, by the text its part starts with. */
const INJECTED: ReadonlyArray<readonly [prefix: string, name: string]> = [
  ["<session_context>", "session context (workspace, folder listing, GEMINI.md files)"],
  ["<hook_context>", HOOK_CONTEXT_NAME]
]
/** The parts between these two hold the files a prompt names with `@path` (the CLI's read_many_files). */
const REFERENCE_START = "--- Content from referenced files ---"
const REFERENCE_END = "--- End of content ---"
const REFERENCED_FILES = "referenced file contents (@path)"
const HOOK_CONTEXT = /<hook_context>[\s\S]*?(?:<\/hook_context>|$)/g

const injectedKind = (text: string): string | null => {
  const start = text.trimStart()
  for (const [prefix, name] of INJECTED) if (start.startsWith(prefix)) return name
  return null
}

interface UserParts {
  readonly own: ReadonlyArray<string>
  readonly omitted: ReadonlyArray<string>
  readonly toolOutput: boolean
  readonly unknown: boolean
}

/**
 * The person's own text in a user message's parts, and what was left out: injected context in
 * its own parts, a hook's context appended inside a part, and the files an `@path` pulled in.
 */
const userParts = (parts: ReadonlyArray<unknown>): UserParts => {
  const own: Array<string> = []
  const omitted: Array<string> = []
  let toolOutput = false
  let unknown = false
  let inReference = false
  const omit = (name: string) => {
    if (!omitted.includes(name)) omitted.push(name)
  }
  for (const part of parts) {
    const kind = partKind(part)
    if (kind === "tool_output") toolOutput = true
    else if (kind === "unknown") unknown = true
    if (kind !== "text") continue
    const text = (part as { readonly text: string }).text
    const trimmed = text.trim()
    if (inReference) {
      omit(REFERENCED_FILES)
      if (trimmed === REFERENCE_END) inReference = false
      continue
    }
    if (trimmed === REFERENCE_START) {
      inReference = true
      omit(REFERENCED_FILES)
      continue
    }
    const injected = injectedKind(text)
    if (injected !== null) {
      omit(injected)
      continue
    }
    const withoutHooks = text.replace(HOOK_CONTEXT, "")
    if (withoutHooks !== text) omit(HOOK_CONTEXT_NAME)
    if (withoutHooks.trim() !== "") own.push(withoutHooks.trimEnd())
  }
  return { own, omitted, toolOutput, unknown }
}

const userMessage = (content: unknown): Interpretation => {
  const parts = partsOf(content)
  if (parts === null) return fixed("unclassified", "user message whose content is neither text nor a list of parts")
  const { own, omitted, toolOutput, unknown } = userParts(parts)
  if (own.length === 0) {
    if (toolOutput) return fixed("excluded", "tool result")
    if (omitted.length > 0) return fixed("context_only", `injected context: ${omitted.join(", ")}`)
    if (unknown) return fixed("unclassified", "user message with parts this version does not know")
    return fixed("excluded", "message without text")
  }
  const text = own.join("\n")
  const message: MessageCandidate =
    omitted.length > 0
      ? { role: "user", text, phase: null, representation: "record", omitted_context: omitted }
      : { role: "user", text, phase: null, representation: "record" }
  return { _tag: "Message", message }
}

const geminiMessage = (entry: Entry): Interpretation => {
  const parts = partsOf(entry.content)
  if (parts === null) return fixed("unclassified", "model message whose content is neither text nor a list of parts")
  const texts: Array<string> = []
  const kinds = new Set<PartKind>()
  for (const part of parts) {
    const kind = partKind(part)
    kinds.add(kind)
    if (kind === "text") texts.push((part as { readonly text: string }).text)
  }
  const text = texts.join("\n")
  if (text.trim() !== "") {
    return { _tag: "Message", message: { role: "assistant", text, phase: null, representation: "record" } }
  }
  if (kinds.has("unknown")) return fixed("unclassified", "model message with parts this version does not know")
  if (Array.isArray(entry.toolCalls) && entry.toolCalls.length > 0)
    return fixed("excluded", "tool call (and its result)")
  if (kinds.has("tool_call")) return fixed("excluded", "tool call")
  if (kinds.has("thought") || (Array.isArray(entry.thoughts) && entry.thoughts.length > 0)) {
    return fixed("excluded", "reasoning")
  }
  return fixed("excluded", "message without text")
}

const setRecord = (entry: Entry): Interpretation =>
  isObject(entry.$set) && Array.isArray(entry.$set.messages)
    ? fixed("metadata", "history snapshot: its messages are indexed at the lines where they were first written")
    : fixed("metadata", "session metadata update")

/**
 * What a record is, from the record alone. A message written again with the same id, and a
 * session header written again on resume, are decided by the classifier, which remembers.
 */
export const interpret = (entry: Entry & { readonly type: string }): Interpretation => {
  switch (entry.type) {
    case "user":
      return userMessage(entry.content)
    case "gemini":
      return geminiMessage(entry)
    case HEADER_TYPE:
      return fixed("metadata", "session header")
    case SET_TYPE:
      return setRecord(entry)
    case REWIND_TYPE:
      return fixed("metadata", "rewind marker: the later messages were taken back in the CLI (kept as they were said)")
    default:
      if (NOTICE_TYPES.has(entry.type)) return fixed("excluded", `${entry.type} notice shown by Gemini CLI`)
      return fixed("unclassified", `record type ${entry.type} is not interpreted`)
  }
}

const WORKSPACE = /\*\*Workspace Directories:\*\*\s*\n\s*- ([^\n]+)/
const SESSION_CONTEXT = "<session_context>"

/** The first workspace folder named in a session context text, or null. */
const workspaceOf = (text: string): string | null => {
  if (!text.trimStart().startsWith(SESSION_CONTEXT)) return null
  return WORKSPACE.exec(text)?.[1]?.trim() || null
}

/**
 * The working folder a record names: a sub-agent's header lists its `directories`; a main
 * session's folder is only in the session context the CLI injects (its first workspace folder),
 * which a `$set.messages` snapshot or a user message carries.
 */
export const cwdOf = (entry: Entry & { readonly type: string }): string | null => {
  if (entry.type === HEADER_TYPE && Array.isArray(entry.directories)) {
    const first = entry.directories[0]
    return typeof first === "string" && first !== "" ? first : null
  }
  const messages =
    entry.type === SET_TYPE && isObject(entry.$set) && Array.isArray(entry.$set.messages)
      ? entry.$set.messages
      : entry.type === "user"
        ? [entry]
        : []
  for (const message of messages) {
    if (!isObject(message) || message.type !== "user") continue
    for (const part of partsOf(message.content) ?? []) {
      if (partKind(part) !== "text") continue
      const found = workspaceOf((part as { readonly text: string }).text)
      if (found !== null) return found
    }
  }
  return null
}
