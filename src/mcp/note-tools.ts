import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import {
  LogUpdateRequest,
  MAX_NOTE_TAGS,
  MAX_NOTE_TEXT_CHARS,
  MAX_SOURCE_TEXT_CHARS,
  MAX_TAG_CHARS,
  OpenSessionRequest
} from "../notes/notes-contract.js"
import { McpLogUpdateResponse, McpOpenSessionResponse, toMcpLogUpdate, toMcpOpenSession } from "./tool-results.js"
import { defineTool, type McpTool } from "./tools.js"

/**
 * The two tools that write: they add to blctx's own local store and nothing else, so they are
 * not read-only (Codex asks before calling them unless the installation approved them), but
 * idempotent (the same call twice writes once), never destructive, and closed-world.
 */
export const NOTE_TOOL_ANNOTATIONS = {
  readOnlyHint: false,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false
} as const satisfies ToolAnnotations

const n = (value: number) => value.toLocaleString("en-US")

const LOCAL = "It writes only to blctx's private index on this machine."

const openSessionTool = defineTool(
  {
    name: "open_session",
    title: "Open a blctx session for your notes",
    description: [
      "Open the blctx session your notes (log_update) belong to: once per conversation, before its first log_update.",
      "`binding_key` is a UUID naming this conversation: your own session id if you have one, otherwise one you generate and keep. The same binding_key always returns the same session, so call this again when a conversation resumes or a call was interrupted (`created` is false then).",
      "Optional: `project`, the absolute directory you work in (notes are then found with search's project filter), and `parent_session_id`, the context_session_id of the session that started you (for a sub-agent).",
      "The answer's `context_session_id` is blctx's own id for the session: pass it as log_update's `session_id`. Reusing a binding_key with another project or parent is refused (session_conflict); leaving them out on a reuse is fine.",
      LOCAL
    ].join(" "),
    input: OpenSessionRequest,
    output: McpOpenSessionResponse,
    run: (client, request) => Effect.map(client.openSession(request), toMcpOpenSession)
  },
  NOTE_TOOL_ANNOTATIONS
)

const logUpdateTool = defineTool(
  {
    name: "log_update",
    title: "Save a note to the person's coding memory",
    description: [
      "Save a durable note in the person's local blctx memory, so later sessions find it with `search` and `context`.",
      "Log what is visible in the conversation and worth keeping: progress (`kind` status), a decision and why (decision), or another fact (note); `authorship` user_requested when the person asked you to record it.",
      "Never log private reasoning, raw tool output, file contents, or secrets (any that slip through are redacted before storing).",
      "When the note records a message shown in the conversation (your reply, or the person's words), copy that message exactly, character for character, into `source_text`.",
      "Pass the `session_id` open_session returned (its context_session_id) and a new UUID as `update_id` for each note. Repeating a call with the same update_id and the same content is safe: nothing is logged twice (`created` is false). The same update_id with different content is refused (update_conflict).",
      `Limits: \`text\` at most ${n(MAX_NOTE_TEXT_CHARS)} characters; at most ${MAX_NOTE_TAGS} \`tags\`, each at most ${MAX_TAG_CHARS} characters; \`source_text\` at most ${n(MAX_SOURCE_TEXT_CHARS)} characters.`,
      "The note is stored before the answer comes: `context` (with the returned `context_id`) and word search find it at once, meaning-based search once it is embedded in the background (context_status's `authored_updates_pending` counts notes still waiting).",
      "The answer names the note (`note_id`, `revision`), `source_type: authored_update` and its `context_session_id`.",
      LOCAL
    ].join(" "),
    input: LogUpdateRequest,
    output: McpLogUpdateResponse,
    run: (client, request) => Effect.map(client.logUpdate(request), toMcpLogUpdate)
  },
  NOTE_TOOL_ANNOTATIONS
)

/** The note tools, in the order `tools/list` shows them (after the read tools). */
export const NOTE_TOOLS: ReadonlyArray<McpTool> = [openSessionTool, logUpdateTool]
