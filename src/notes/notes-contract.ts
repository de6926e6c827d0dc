import { type ParseResult, Schema } from "effect"
import { BoundedPath } from "../domain/bounded-text.js"
import { described } from "../domain/field-description.js"
import { LIST_NOTES_BOUNDS, rangeWords } from "../domain/read-bounds.js"
import { boundedWithFallback } from "../domain/read-bounds-schema.js"

/**
 * Authored updates: notes an agent logs on purpose (visible progress, decisions), in a session
 * blctx opens for it. The request and response schemas of `OpenSession` and `LogUpdate` are
 * defined here once: the daemon protocol (`src/rpc/notes-protocol.ts`), its handlers, the client
 * and the MCP tools `open_session` / `log_update` (their JSON Schemas included) derive from them.
 */

/** Characters of note text a `log_update` may carry. */
export const MAX_NOTE_TEXT_CHARS = 16_000
/** Tags a note may carry, and characters per tag. */
export const MAX_NOTE_TAGS = 20
export const MAX_TAG_CHARS = 64
/** Characters of `source_text` (the visible message a note records; replies can be long). */
export const MAX_SOURCE_TEXT_CHARS = 32_000

const thousands = (n: number) => n.toLocaleString("en-US")

/** The length of the value a refinement refused (a string or an array). */
const lengthOf = (issue: ParseResult.ParseIssue): number => {
  const actual = (issue as { readonly actual?: unknown }).actual
  return typeof actual === "string" || Array.isArray(actual) ? actual.length : 0
}

/**
 * A UUID (any version), as the caller chose it. Stored lower-cased, so the same id in capitals is
 * the same id.
 */
const CallerUuid = (description: string) =>
  Schema.UUID.annotations({
    description,
    message: () => "is not a UUID (32 hexadecimal digits as 8-4-4-4-12, e.g. from crypto.randomUUID())"
  })

export const NoteKind = Schema.Literal("status", "decision", "note")
export type NoteKind = typeof NoteKind.Type

export const Authorship = Schema.Literal("agent_generated", "user_requested")
export type Authorship = typeof Authorship.Type

export const NoteText = Schema.String.pipe(
  Schema.maxLength(MAX_NOTE_TEXT_CHARS, {
    message: (issue) =>
      `is ${thousands(lengthOf(issue))} characters long; a note is at most ${thousands(MAX_NOTE_TEXT_CHARS)} characters: log a shorter summary, or split it into several updates`
  }),
  Schema.pattern(/\S/, { message: () => "is empty: a note needs some text" })
)

export const NoteTag = Schema.String.pipe(
  Schema.maxLength(MAX_TAG_CHARS, {
    message: (issue) => `is ${thousands(lengthOf(issue))} characters long; a tag is at most ${MAX_TAG_CHARS} characters`
  }),
  Schema.pattern(/\S/, { message: () => "is empty: a tag needs some text" })
).annotations({ description: `A label of 1 to ${MAX_TAG_CHARS} characters, not blank` })

export const NoteTags = Schema.Array(NoteTag).pipe(
  Schema.maxItems(MAX_NOTE_TAGS, {
    message: (issue) => `has ${lengthOf(issue)} tags; a note has at most ${MAX_NOTE_TAGS}`
  })
)

export const SourceText = Schema.String.pipe(
  Schema.maxLength(MAX_SOURCE_TEXT_CHARS, {
    message: (issue) =>
      `is ${thousands(lengthOf(issue))} characters long; source_text is at most ${thousands(MAX_SOURCE_TEXT_CHARS)} characters`
  }),
  Schema.pattern(/\S/, { message: () => "is empty: leave source_text out when the note records no message" })
)

/**
 * A project directory as a session records it: absolute and without `..` segments, so the same
 * folder is always the same string and a note never claims a folder the caller did not name.
 */
const ProjectPath = BoundedPath.pipe(
  Schema.pattern(/^\/(?!(?:.*\/)?\.\.(?:\/|$))/, {
    message: () =>
      "must be an absolute path (starting with /) without .. segments: pass the project's full directory, e.g. /home/me/code/app"
  })
).annotations({
  description: "The project the session works in: its absolute directory (starting with /, no .. segments)."
})

/** Open (or resume) the blctx session bound to `binding_key`. */
export const OpenSessionRequest = Schema.Struct({
  binding_key: CallerUuid(
    "A UUID you choose for this conversation and keep for its whole life (for example your own session id). The same binding_key always returns the same blctx session."
  ),
  project: Schema.optional(ProjectPath),
  parent_session_id: Schema.optional(
    CallerUuid("The blctx session that started this one (a sub-agent's parent), as open_session returned it.")
  )
})
export type OpenSessionRequest = typeof OpenSessionRequest.Type

export class OpenSessionResponse extends Schema.Class<OpenSessionResponse>("OpenSessionResponse")({
  /** blctx's own id for the session (random, never an agent's session id): pass it to LogUpdate. */
  session_id: Schema.String,
  binding_key: Schema.String,
  /** As stored: secrets redacted, trailing slashes removed. */
  project: Schema.NullOr(Schema.String),
  parent_session_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  /** False when the binding already had this session (a retry, or a resumed conversation). */
  created: Schema.Boolean
}) {}

/** Log one note in a session; committed before any embedding. */
export const LogUpdateRequest = Schema.Struct({
  session_id: CallerUuid("The session to log in: the context_session_id open_session returned."),
  update_id: CallerUuid(
    "A new UUID for this update, chosen by you. Calling again with the same update_id and the same content is safe (nothing is logged twice); the same update_id with other content is refused."
  ),
  text: NoteText.annotations({
    description: `The note, at most ${thousands(MAX_NOTE_TEXT_CHARS)} characters: visible progress or a decision, written to be understood later without this conversation.`
  }),
  tags: Schema.optionalWith(
    NoteTags.annotations({
      description: `Up to ${MAX_NOTE_TAGS} short labels (at most ${MAX_TAG_CHARS} characters each), e.g. a component or topic.`,
      default: []
    }),
    { default: () => [] }
  ),
  kind: Schema.optionalWith(
    NoteKind.annotations({
      description: "status (progress), decision (what was decided and why), or note (anything else worth keeping).",
      default: "note"
    }),
    { default: () => "note" as const }
  ),
  authorship: Schema.optionalWith(
    Authorship.annotations({
      description: "agent_generated (you chose to log it) or user_requested (the person asked you to record it).",
      default: "agent_generated"
    }),
    { default: () => "agent_generated" as const }
  ),
  source_text: Schema.optional(
    SourceText.annotations({
      description:
        "The exact visible message this note records (a reply you showed, or the person's words), copied character for character, not paraphrased."
    })
  )
})
export type LogUpdateRequest = typeof LogUpdateRequest.Type

export class LogUpdateResponse extends Schema.Class<LogUpdateResponse>("LogUpdateResponse")({
  update_id: Schema.String,
  /** The note this update wrote; later revisions of it keep this id. */
  note_id: Schema.String,
  revision: Schema.Int,
  /** Always `authored_update`: the source type its message and chunks are stored and found with. */
  source_type: Schema.Literal("authored_update"),
  /** The blctx session it was logged in. */
  session_id: Schema.String,
  /** Pass to `context` to read the note; search finds its chunks. */
  context_id: Schema.String,
  kind: NoteKind,
  authorship: Authorship,
  /** As stored: secrets redacted. */
  tags: Schema.Array(Schema.String),
  created_at: Schema.String,
  /** Secrets replaced in the text, the tags and source_text before they were stored. */
  redactions: Schema.Int,
  /** False when this update id was already logged with the same content: nothing new was written. */
  created: Schema.Boolean
}) {}

/** A binding reused with other metadata than the session was opened with. */
export class SessionBindingConflict extends Schema.TaggedError<SessionBindingConflict>()("SessionBindingConflict", {
  binding_key: Schema.String,
  session_id: Schema.String,
  conflicts: Schema.Array(
    Schema.Struct({
      field: Schema.Literal("project", "parent_session_id"),
      opened_with: Schema.NullOr(Schema.String),
      requested: Schema.String
    })
  )
}) {
  override get message() {
    const what = this.conflicts
      .map((c) => `${c.field} ${JSON.stringify(c.opened_with)} (this call: ${JSON.stringify(c.requested)})`)
      .join(", ")
    return `binding_key ${this.binding_key} is already bound to session ${this.session_id}, opened with ${what}`
  }
  get remediation() {
    return "Resume it with the same binding_key and the metadata it was opened with (or leave those fields out), or choose a new binding_key for a new session."
  }
}

/** A session id that names no blctx session. */
export class UnknownContextSession extends Schema.TaggedError<UnknownContextSession>()("UnknownContextSession", {
  session_id: Schema.String,
  /** Which argument named it. */
  field: Schema.Literal("session_id", "parent_session_id")
}) {
  override get message() {
    return `${this.field} ${this.session_id} names no blctx session`
  }
  get remediation() {
    return "Call open_session first and pass the context_session_id it returns (an agent's own session id is not a blctx session)."
  }
}

/** An update id logged before with other content. */
export class UpdateConflict extends Schema.TaggedError<UpdateConflict>()("UpdateConflict", {
  update_id: Schema.String,
  note_id: Schema.String,
  /** The fields whose stored value differs from this call's. */
  differing: Schema.Array(Schema.String)
}) {
  override get message() {
    return `update_id ${this.update_id} was already logged (note ${this.note_id}) with different content: ${this.differing.join(", ")} differ`
  }
  get remediation() {
    return "Use a new update_id for a new note; repeat an update_id only to retry exactly the same call."
  }
}

// Revisions: a note changes by adding a revision; every revision is kept, only the current one is
// searched and shown (`src/notes/note-revision-store.ts`).

export const NoteId = CallerUuid(
  "The note to change: the note_id log_update, search (source.note_id) or note_history returned."
)

/** Add a revision to a note, if it is still at `expected_revision` (optimistic concurrency). */
export const UpdateNoteRequest = Schema.Struct({
  note_id: NoteId,
  expected_revision: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1), Schema.lessThanOrEqualTo(1_000_000)).annotations({
    description:
      "The revision you are changing, as search (source.revision), log_update or note_history reported it. If the note has moved on since, nothing is written and the answer is stale_revision with the current revision."
  }),
  text: NoteText.annotations({
    description: `The whole new text of the note (it replaces the current text; older revisions stay in note_history), at most ${thousands(MAX_NOTE_TEXT_CHARS)} characters.`
  }),
  tags: Schema.optional(
    NoteTags.annotations({
      description: `The new tags, replacing the current ones (up to ${MAX_NOTE_TAGS}, at most ${MAX_TAG_CHARS} characters each). Leave out to keep the current tags.`
    })
  ),
  session_id: Schema.optional(
    CallerUuid(
      "The blctx session making the change (your context_session_id from open_session). Leave out to record the change in the note's own session."
    )
  ),
  authorship: Schema.optionalWith(
    Authorship.annotations({
      description: "agent_generated (you chose to change it) or user_requested (the person asked you to).",
      default: "agent_generated"
    }),
    { default: () => "agent_generated" as const }
  ),
  update_id: Schema.optional(
    CallerUuid(
      "Optional: a new UUID for this change, chosen by you, to make a retry safe: the same update_id with the same content returns what was stored (created false); with other content it is refused (update_conflict)."
    )
  )
})
export type UpdateNoteRequest = typeof UpdateNoteRequest.Type

export class UpdateNoteResponse extends Schema.Class<UpdateNoteResponse>("UpdateNoteResponse")({
  ...LogUpdateResponse.fields,
  /** The revision this one replaced as current (`revision - 1`). */
  previous_revision: Schema.Int
}) {}

export const NoteHistoryRequest = Schema.Struct({
  note_id: CallerUuid("The note whose revisions to list: a note_id from log_update, update_note or search.")
})
export type NoteHistoryRequest = typeof NoteHistoryRequest.Type

/** One revision of a note, as it was stored. */
export class NoteRevisionEntry extends Schema.Class<NoteRevisionEntry>("NoteRevisionEntry")({
  revision: Schema.Int,
  update_id: Schema.String,
  /** As stored: secrets redacted. */
  text: Schema.String,
  tags: Schema.Array(Schema.String),
  authorship: Authorship,
  /** The blctx session that wrote this revision. */
  session_id: Schema.String,
  created_at: Schema.String,
  source_text: Schema.NullOr(Schema.String),
  /** This revision's message: `context` shows the note's current revision from any of them. */
  context_id: Schema.String
}) {}

export class NoteHistoryResponse extends Schema.Class<NoteHistoryResponse>("NoteHistoryResponse")({
  note_id: Schema.String,
  /** The revision search, recent and context show; pass it as update_note's expected_revision. */
  current_revision: Schema.Int,
  kind: NoteKind,
  /** Every revision, oldest first. */
  revisions: Schema.Array(NoteRevisionEntry)
}) {}

/** Notes, newest change first, optionally of one project or one blctx session. */
export const ListNotesRequest = Schema.Struct({
  project: Schema.optional(described(BoundedPath, "Only notes of this project directory or a directory under it.")),
  session_id: Schema.optional(
    described(
      Schema.String.pipe(Schema.maxLength(200)),
      "Only notes whose current revision was written in this blctx session."
    )
  ),
  limit: boundedWithFallback(LIST_NOTES_BOUNDS.limit, `At most N notes (${rangeWords(LIST_NOTES_BOUNDS.limit)}).`),
  offset: boundedWithFallback(LIST_NOTES_BOUNDS.offset, "Skip the first N notes, to page on (next_offset).")
})
export type ListNotesRequest = typeof ListNotesRequest.Type

/** A note as a list shows it: its current revision, with an excerpt of its text. */
export class NoteSummary extends Schema.Class<NoteSummary>("NoteSummary")({
  note_id: Schema.String,
  current_revision: Schema.Int,
  kind: NoteKind,
  tags: Schema.Array(Schema.String),
  authorship: Authorship,
  /** When the current revision was written. */
  updated_at: Schema.String,
  /** When revision 1 was logged. */
  created_at: Schema.String,
  /** The blctx session of the current revision. */
  session_id: Schema.String,
  project: Schema.NullOr(Schema.String),
  /** The current text's first characters (the whole text when it is short). */
  excerpt: Schema.String,
  excerpt_truncated: Schema.Boolean,
  context_id: Schema.String
}) {}

export class ListNotesResponse extends Schema.Class<ListNotesResponse>("ListNotesResponse")({
  notes: Schema.Array(NoteSummary),
  offset: Schema.Int,
  limit: Schema.Int,
  next_offset: Schema.NullOr(Schema.Int)
}) {}

/** A note id that names no note (never logged, or forgotten). */
export class UnknownNote extends Schema.TaggedError<UnknownNote>()("UnknownNote", {
  note_id: Schema.String
}) {
  override get message() {
    return `note ${this.note_id} does not exist (it was never logged here, or it was forgotten)`
  }
  get remediation() {
    return "Pass a note_id that search, recent or log_update returned; to record something new, call log_update."
  }
}

/** An update based on a revision that is no longer the current one: nothing was written. */
export class StaleRevision extends Schema.TaggedError<StaleRevision>()("StaleRevision", {
  note_id: Schema.String,
  expected_revision: Schema.Int,
  current_revision: Schema.Int
}) {
  override get message() {
    return `note ${this.note_id} is at revision ${this.current_revision}, not ${this.expected_revision}: it changed since you read it, nothing was written`
  }
  get remediation() {
    return `Read the current text with note_history (note_id ${this.note_id}), merge your change into it, and call update_note again with expected_revision ${this.current_revision}.`
  }
}
