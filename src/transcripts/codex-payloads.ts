import { Option, Schema } from "effect"

/**
 * The parts of Codex rollout payloads the classifier reads, decoded with `effect/Schema`. Every
 * schema is partial on purpose: unknown fields are ignored here (the record keeps them), and a
 * payload that does not match is classified `unclassified`, never rejected.
 */

const OptionalText = Schema.optional(Schema.NullOr(Schema.String))

const ContentPart = Schema.Struct({ type: Schema.optional(Schema.String), text: Schema.optional(Schema.Unknown) })
const Content = Schema.Array(Schema.Unknown)

/** `response_item` / `message`: the model-facing copy of a user, developer or assistant message. */
export const ResponseMessage = Schema.Struct({
  type: Schema.Literal("message"),
  role: Schema.String,
  content: Schema.optional(Content),
  phase: OptionalText
})

/** `event_msg` / `user_message` and `agent_message`: the UI copy of the same messages. */
export const EventUserMessage = Schema.Struct({ type: Schema.Literal("user_message"), message: Schema.String })
export const EventAgentMessage = Schema.Struct({
  type: Schema.Literal("agent_message"),
  message: Schema.String,
  phase: OptionalText
})

/** `event_msg` / `item_completed` (paginated history): a finished turn item. */
export const ItemCompleted = Schema.Struct({
  type: Schema.Literal("item_completed"),
  turn_id: OptionalText,
  item: Schema.Struct({ type: Schema.String, content: Schema.optional(Content), phase: OptionalText })
})

/** Any payload that may name its turn: `task_started`, `task_complete`, `turn_aborted`, `turn_context`. */
export const TurnScoped = Schema.Struct({ type: Schema.optional(Schema.String), turn_id: OptionalText })

export const SessionMetaPayload = Schema.Struct({
  id: Schema.optional(Schema.String),
  timestamp: Schema.optional(Schema.String),
  cwd: Schema.optional(Schema.String),
  originator: Schema.optional(Schema.String),
  cli_version: Schema.optional(Schema.String),
  forked_from_id: OptionalText,
  source: Schema.optional(Schema.Unknown)
})
export type SessionMetaPayload = typeof SessionMetaPayload.Type

export const CompactedPayload = Schema.Struct({ message: Schema.String })

/** A payload's own `type` field, when it has one. */
export const PayloadType = Schema.Struct({ type: Schema.String })

const decodeOption =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (input: unknown): Option.Option<A> =>
    Schema.decodeUnknownOption(schema)(input)

export const decodeResponseMessage = decodeOption(ResponseMessage)
export const decodeEventUserMessage = decodeOption(EventUserMessage)
export const decodeEventAgentMessage = decodeOption(EventAgentMessage)
export const decodeItemCompleted = decodeOption(ItemCompleted)
export const decodeTurnScoped = decodeOption(TurnScoped)
export const decodeSessionMeta = decodeOption(SessionMetaPayload)
export const decodeCompacted = decodeOption(CompactedPayload)
export const decodePayloadType = decodeOption(PayloadType)
const decodePart = decodeOption(ContentPart)

/** The text parts of a message's content, in order (images and other parts have no text). */
export const textParts = (content: ReadonlyArray<unknown> | undefined): Array<string> => {
  const out: Array<string> = []
  for (const part of content ?? []) {
    const decoded = decodePart(part)
    if (Option.isSome(decoded) && typeof decoded.value.text === "string") out.push(decoded.value.text)
  }
  return out
}

/** What `session_meta.source` says about a sub-agent (`{"subagent": "review"}` and richer forms). */
export const subagentOf = (source: unknown): string | null => {
  if (typeof source !== "object" || source === null || !("subagent" in source)) return null
  const value = (source as { subagent: unknown }).subagent
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null) return Object.keys(value)[0] ?? "subagent"
  return "subagent"
}
