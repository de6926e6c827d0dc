import { SqlClient } from "@effect/sql"
import { Data, Effect, Option, Schema } from "effect"
import { agentChoices } from "../domain/agent-choices.js"
import { messageContextId, parseContextId } from "../domain/context-id.js"
import { described } from "../domain/field-description.js"
import { CONTEXT_BOUNDS, rangeWords } from "../domain/read-bounds.js"
import { boundedNumber, boundedWithFallback } from "../domain/read-bounds-schema.js"
import { firstRowOf, rowsOf } from "../sql/sql-rows.js"
import { AgentFilter, agentClause, checkAgent, MESSAGE_AGENT } from "./agent-filter.js"
import { RESPONSE_TEXT_BUDGET, ResultAgent, SourceLocation, SourceType, sourceLocationOf } from "./contract.js"
import { NOTE_REVISIONS } from "./current-revision.js"
import { ProvenanceColumns } from "./provenance-row.js"

/** A context id that names nothing in the index. */
export class ContextNotFound extends Data.TaggedError("ContextNotFound")<{ readonly context_id: string }> {}

/** A context id whose source the request's `agent` filter leaves out: nothing of it is returned. */
export class ContextOfOtherAgent extends Data.TaggedError("ContextOfOtherAgent")<{
  readonly context_id: string
  readonly agent: string
  /** The anchor's agent, when one is recorded. */
  readonly found: string | null
}> {}

export class ContextMessage extends Schema.Class<ContextMessage>("ContextMessage")({
  context_id: Schema.String,
  /** Position of the message in its session (0-based), for `--offset`. */
  index: Schema.Int,
  is_anchor: Schema.Boolean,
  role: Schema.String,
  kind: Schema.String,
  source_type: SourceType,
  agent: ResultAgent,
  turn_number: Schema.Int,
  turn_id: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  source: SourceLocation,
  /** Total characters of the stored message text. */
  text_length: Schema.Int,
  /** The first character of `text` within the message. */
  char_offset: Schema.Int,
  text: Schema.String,
  text_truncated: Schema.Boolean
}) {}

export class ContextResponse extends Schema.Class<ContextResponse>("ContextResponse")({
  context_id: Schema.String,
  anchor: Schema.Struct({
    context_id: Schema.String,
    index: Schema.Int,
    chunk: Schema.NullOr(Schema.Struct({ char_start: Schema.Int, char_end: Schema.Int }))
  }),
  session_id: Schema.NullOr(Schema.String),
  project: Schema.NullOr(Schema.String),
  total_messages: Schema.Int,
  offset: Schema.Int,
  limit: Schema.Int,
  messages: Schema.Array(ContextMessage),
  /** Where the next page starts: the message index, and a character offset inside it when it was cut. */
  next_offset: Schema.NullOr(Schema.Int),
  next_char_offset: Schema.NullOr(Schema.Int),
  truncated: Schema.Boolean,
  returned_chars: Schema.Int
}) {}

/** The messages around a result: the one shape the RPC, the query workers, the CLI and MCP share. */
export const ContextRequest = Schema.Struct({
  /** A `context_id` from a search or recent answer. */
  context_id: Schema.String.pipe(Schema.maxLength(40)),
  /** First message (0-based index in the session); defaults to the first message of the anchor's turn. */
  offset: Schema.optional(
    boundedNumber(
      CONTEXT_BOUNDS.offset,
      "The first message to return, by its position in the session (0 is the first message). Default: the first message of the result's turn."
    )
  ),
  limit: boundedWithFallback(CONTEXT_BOUNDS.limit, `How many messages to return, ${rangeWords(CONTEXT_BOUNDS.limit)}.`),
  /** Character offset inside the first message returned. */
  char_offset: boundedWithFallback(
    CONTEXT_BOUNDS.char_offset,
    "Start this many characters into the first message, to continue a message an answer cut off: pass its next_char_offset."
  ),
  /** Answer only when the context id's source passes this agent filter (as search's `agent`). */
  agent: Schema.optional(
    described(
      AgentFilter,
      `Answer only when the result comes from this agent's history (${agentChoices()}), or is a note no other agent's session wrote; otherwise fail saying whose it is.`
    )
  )
})
export type ContextRequest = typeof ContextRequest.Type

const Row = Schema.Struct({
  id: Schema.Number,
  session_id: Schema.NullOr(Schema.String),
  turn_number: Schema.Number,
  turn_id: Schema.NullOr(Schema.String),
  role: Schema.String,
  kind: Schema.String,
  source_type: Schema.String,
  cwd: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  text: Schema.String,
  ...ProvenanceColumns,
  note_revisions: Schema.NullOr(Schema.Number)
})
type Row = typeof Row.Type
const messageRows = rowsOf(Row)
const chunkAnchor = firstRowOf(
  Schema.Struct({ message_id: Schema.Number, char_start: Schema.Number, char_end: Schema.Number })
)
const headRow = firstRowOf(
  Schema.Struct({
    source_file_id: Schema.NullOr(Schema.Number),
    note_id: Schema.NullOr(Schema.String),
    agent: Schema.NullOr(Schema.String),
    // NULL when the message has no agent of its own and no binding names one: it does not pass.
    passes: Schema.NullOr(Schema.Number)
  })
)

/**
 * The messages around a result, with exact text: by default the anchor's whole turn and what
 * follows, paged by messages (`offset`, `limit`) and, for a long message, by characters. With
 * `agent`, a context id whose source that filter leaves out (another agent's transcript, or a
 * note bound to another agent) is `ContextOfOtherAgent`: one source is one agent's, so the filter
 * keeps all of it or none.
 */
export const expandContext = (request: ContextRequest, budget: number = RESPONSE_TEXT_BUDGET) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const parsed = parseContextId(request.context_id)
    if (parsed === null) return yield* new ContextNotFound({ context_id: request.context_id })
    const anchor =
      parsed.kind === "chunk"
        ? Option.getOrUndefined(
            yield* chunkAnchor(sql`SELECT message_id, char_start, char_end FROM chunks WHERE id = ${parsed.chunk_id}`)
          )
        : { message_id: parsed.message_id, char_start: null, char_end: null, ...parsed.range }
    if (anchor === undefined) return yield* new ContextNotFound({ context_id: request.context_id })
    const agent = yield* checkAgent(request.agent)
    const head = Option.getOrUndefined(
      yield* headRow(sql`SELECT m.source_file_id, m.note_id, ${sql.literal(MESSAGE_AGENT)} AS agent,
         ${agent === undefined ? sql`1` : agentClause(sql, agent)} AS passes
       FROM messages m WHERE m.id = ${anchor.message_id}`)
    )
    if (head === undefined) return yield* new ContextNotFound({ context_id: request.context_id })
    if (agent !== undefined && !head.passes) {
      return yield* new ContextOfOtherAgent({ context_id: request.context_id, agent, found: head.agent })
    }

    // A transcript's messages in file order; a note is the revision the id names (search and
    // recent hand out the current one's, note_history each revision's), so an id written down
    // keeps naming the text it named, with how many revisions the note has now.
    const all = yield* messageRows(sql`
      SELECT m.id, m.session_id, m.turn_number, m.turn_id, m.role, m.kind, m.source_type, m.cwd, m.timestamp, m.text,
             ${sql.literal(MESSAGE_AGENT)} AS agent, f.path, m.line, m.byte_start, m.byte_end, m.note_id, m.note_revision,
             ${sql.literal(NOTE_REVISIONS)} AS note_revisions
      FROM messages m LEFT JOIN source_files f ON f.id = m.source_file_id
      WHERE ${
        head.source_file_id !== null
          ? sql`m.source_file_id = ${head.source_file_id}`
          : sql`m.id = ${anchor.message_id} AND m.source_file_id IS NULL`
      }
      ORDER BY m.line, m.note_revision, m.id`)
    const anchorIndex = head.note_id !== null ? 0 : all.findIndex((m) => m.id === anchor.message_id)
    const anchorRow = all[anchorIndex]
    if (anchorRow === undefined) return yield* new ContextNotFound({ context_id: request.context_id })
    const turnStart = all.findIndex((m) => m.turn_number === anchorRow.turn_number)
    const offset = Math.min(Math.max(0, request.offset ?? turnStart), all.length)

    const messages: Array<ContextMessage> = []
    let used = 0
    let nextOffset: number | null = null
    let nextChar: number | null = null
    let truncated = false
    for (let index = offset; index < Math.min(all.length, offset + request.limit); index++) {
      const row = all[index] as Row
      const from = index === offset ? Math.min(Math.max(0, request.char_offset), row.text.length) : 0
      const room = budget - used
      if (room <= 0) {
        truncated = true
        nextOffset = index
        break
      }
      const rest = row.text.slice(from)
      const text = rest.slice(0, room)
      const cut = text.length < rest.length
      used += text.length
      messages.push(
        new ContextMessage({
          context_id: messageContextId(row.id),
          index,
          is_anchor: row.id === anchorRow.id,
          role: row.role,
          kind: row.kind,
          source_type: row.source_type,
          agent: row.agent,
          turn_number: row.turn_number,
          turn_id: row.turn_id,
          timestamp: row.timestamp,
          source: sourceLocationOf(row),
          text_length: row.text.length,
          char_offset: from,
          text,
          text_truncated: cut
        })
      )
      if (cut) {
        truncated = true
        nextOffset = index
        nextChar = from + text.length
        break
      }
    }
    if (nextOffset === null && offset + messages.length < all.length) nextOffset = offset + messages.length
    return new ContextResponse({
      context_id: request.context_id,
      anchor: {
        context_id: messageContextId(anchorRow.id),
        index: anchorIndex,
        // A passage id written down before the message was redacted again may reach past its text.
        chunk:
          anchor.char_start === null || anchor.char_end === null
            ? null
            : {
                char_start: Math.min(anchor.char_start, anchorRow.text.length),
                char_end: Math.min(anchor.char_end, anchorRow.text.length)
              }
      },
      session_id: anchorRow.session_id,
      project: anchorRow.cwd,
      total_messages: all.length,
      offset,
      limit: request.limit,
      messages,
      next_offset: nextOffset,
      next_char_offset: nextChar,
      truncated,
      returned_chars: used
    })
  })
