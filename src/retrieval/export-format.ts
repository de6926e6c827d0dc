import { Schema } from "effect"
import { agentChoices } from "../domain/agent-choices.js"
import { BoundedDate, MAX_ID_CHARS, MAX_PATH_CHARS } from "../domain/bounded-text.js"
import { described } from "../domain/field-description.js"
import {
  Authorship,
  MAX_NOTE_TAGS,
  MAX_NOTE_TEXT_CHARS,
  MAX_SOURCE_TEXT_CHARS,
  NoteKind
} from "../notes/notes-contract.js"
import { AgentFilter } from "./agent-filter.js"
import { TranscriptSpan } from "./contract.js"

/**
 * The export file (`blctx export`), one JSON document per line, defined once: export encodes
 * these schemas and `blctx import-notes` decodes them, so nothing is read that export could not
 * have written.
 *
 * 1. `header`: the format and its version, the schema version of the database it came from,
 *    when, from which installation, with which filters.
 * 2. `context_session`: each blctx session an exported note revision was logged in, and their
 *    ancestors, parents before children.
 * 3. `note_revision`: every revision of every exported note, oldest first per note.
 * 4. `message`: each indexed transcript message with its provenance (never the raw transcript:
 *    the redacted text the index holds). `import-notes` does not restore them: a transcript's
 *    rows are rebuilt from the transcript itself, by indexing it.
 * 5. `end`: the counts of what came before it. A file without it (or whose counts differ) was
 *    cut short or altered, and is refused.
 *
 * Texts are what the index holds: already redacted. Forgotten notes and messages are deleted,
 * so they cannot be exported.
 */

export const EXPORT_FORMAT = "blctx-export"
export const EXPORT_FORMAT_VERSION = 1

/**
 * Imported strings are bounded like every request's (they travel to the daemon). Stored note
 * text is redacted request text; a redaction marker may be longer than the secret it replaced,
 * so the bounds leave room for that.
 */
const MAX_IMPORTED_TEXT_CHARS = MAX_NOTE_TEXT_CHARS * 2
const MAX_IMPORTED_SOURCE_TEXT_CHARS = MAX_SOURCE_TEXT_CHARS * 2
const MAX_IMPORTED_TAG_CHARS = 256

/** A UUID as blctx stores them (ids of notes, updates, sessions, bindings). */
const Uuid = Schema.UUID
/** An ISO 8601 time as blctx stores them. */
const StoredTime = BoundedDate.pipe(
  Schema.filter((s) => !Number.isNaN(Date.parse(s)), { message: () => "is not an ISO 8601 time" })
)

const SINCE =
  "Only from this time on (inclusive): transcript messages of that time, and notes with a revision written then (with their whole history)."
const UNTIL = "Only before this time (exclusive), as `since`."
const AGENT = `Only this agent's transcript messages: ${agentChoices({ glossed: true })}. Notes stay unless their session belongs to another agent. Default: every agent.`

/** What `blctx export` exports; its options are derived from these fields (`request-options.ts`). */
export const ExportFilters = Schema.Struct({
  since: Schema.optional(described(BoundedDate, SINCE)),
  until: Schema.optional(described(BoundedDate, UNTIL)),
  agent: Schema.optional(described(AgentFilter, AGENT))
})
export type ExportFilters = typeof ExportFilters.Type

/** The end line's counts: one integer for each kind of thing exported, in this order. */
export const ExportCounts = Schema.Record({
  key: Schema.Literal("context_sessions", "notes", "note_revisions", "messages"),
  value: Schema.Int
})
export type ExportCounts = typeof ExportCounts.Type

export const HeaderLine = Schema.Struct({
  type: Schema.Literal("header"),
  format: Schema.Literal(EXPORT_FORMAT),
  format_version: Schema.Int,
  schema_version: Schema.Int,
  exported_at: Schema.String,
  installation_id: Schema.String,
  filters: ExportFilters
})
export type HeaderLine = typeof HeaderLine.Type

export const ContextSessionLine = Schema.Struct({
  type: Schema.Literal("context_session"),
  id: Uuid,
  binding_key: Uuid,
  project: Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_PATH_CHARS))),
  parent_session_id: Schema.NullOr(Uuid),
  created_at: StoredTime
})
export type ContextSessionLine = typeof ContextSessionLine.Type

export const NoteRevisionLine = Schema.Struct({
  type: Schema.Literal("note_revision"),
  note_id: Uuid,
  revision: Schema.Int.pipe(Schema.between(1, 1_000_000)),
  update_id: Uuid,
  session_id: Uuid,
  kind: NoteKind,
  authorship: Authorship,
  tags: Schema.Array(Schema.String.pipe(Schema.maxLength(MAX_IMPORTED_TAG_CHARS))).pipe(Schema.maxItems(MAX_NOTE_TAGS)),
  text: Schema.String.pipe(Schema.maxLength(MAX_IMPORTED_TEXT_CHARS)),
  source_text: Schema.NullOr(Schema.String.pipe(Schema.maxLength(MAX_IMPORTED_SOURCE_TEXT_CHARS))),
  created_at: StoredTime,
  content_sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/))
})
export type NoteRevisionLine = typeof NoteRevisionLine.Type

/** An indexed transcript message. Only exported; import counts it and leaves it to the transcript. */
export const MessageLine = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.Int,
  source_type: Schema.String,
  agent: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  turn_number: Schema.Int,
  turn_id: Schema.NullOr(Schema.String),
  role: Schema.String,
  kind: Schema.String,
  phase: Schema.NullOr(Schema.String),
  text: Schema.String,
  cwd: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  source: TranscriptSpan
})
export type MessageLine = typeof MessageLine.Type

export const EndLine = Schema.Struct({ type: Schema.Literal("end"), counts: ExportCounts })
export type EndLine = typeof EndLine.Type

/** What an export page carries: every line but the header and the trailer, which the CLI writes. */
export const ExportItem = Schema.Union(ContextSessionLine, NoteRevisionLine, MessageLine)
export type ExportItem = typeof ExportItem.Type

export const ExportLine = Schema.Union(HeaderLine, ContextSessionLine, NoteRevisionLine, MessageLine, EndLine)
export type ExportLine = typeof ExportLine.Type

/** One line of the file as the JSON value written. */
export const encodeExportValue = Schema.encodeSync(ExportLine)

/** One line of the file, as JSON text (no newline). */
export const encodeExportLine = (line: ExportLine): string => JSON.stringify(encodeExportValue(line))

/** Parses and decodes one line of a file; the error says what is wrong, never echoing the text. */
export const decodeExportLine = Schema.decodeUnknownEither(Schema.parseJson(ExportLine), { onExcessProperty: "error" })

/** Bounds on one ExportPage answer: items, and characters of text (so an answer stays small). */
export const MAX_EXPORT_PAGE_ITEMS = 1_000
export const EXPORT_PAGE_TEXT_BUDGET = 1_000_000

/** Where an export continues: the phase it is in and the key of the last item it returned. */
export const ExportCursor = Schema.Union(
  Schema.TaggedStruct("sessions", { depth: Schema.Int, id: Schema.String.pipe(Schema.maxLength(MAX_ID_CHARS)) }),
  Schema.TaggedStruct("notes", {
    note_id: Schema.String.pipe(Schema.maxLength(MAX_ID_CHARS)),
    revision: Schema.Int
  }),
  Schema.TaggedStruct("messages", { id: Schema.Int })
)
export type ExportCursor = typeof ExportCursor.Type

/** The first cursor of each phase, in order. */
export const EXPORT_START: ExportCursor = { _tag: "sessions", depth: -1, id: "" }

/** One page of an export, in file order: sessions, then note revisions, then transcript messages. */
export const ExportPageRequest = Schema.Struct({
  /** Where to continue: the previous page's `next_cursor`; left out for the first page. */
  cursor: Schema.optional(ExportCursor),
  limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, MAX_EXPORT_PAGE_ITEMS)), { default: () => 200 }),
  filters: Schema.optionalWith(ExportFilters, { default: () => ({}) })
})
export type ExportPageRequest = typeof ExportPageRequest.Type

export class ExportPageResponse extends Schema.Class<ExportPageResponse>("ExportPageResponse")({
  items: Schema.Array(ExportItem),
  /** Null when the export is complete. A page may be empty and still continue (a phase ended). */
  next_cursor: Schema.NullOr(ExportCursor)
}) {}
