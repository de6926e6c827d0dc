import { Schema } from "effect"
import { BoundedDate, BoundedId, BoundedPath } from "../domain/bounded-text.js"
import { SourceLocation } from "../retrieval/contract.js"

/**
 * Forgetting, explicit and previewed. The selector, the preview, the confirmation and the
 * refusals are defined here once: the daemon protocol (`src/rpc/forget-protocol.ts`), its
 * handlers, the client, `blctx forget` and the MCP tool `forget` derive from them.
 */

/** How long a preview's token may confirm it. */
export const FORGET_TOKEN_LIFETIME_MS = 10 * 60 * 1000
/** Items a preview lists (the counts cover everything). */
export const FORGET_PREVIEW_ITEMS = 10
/** Characters of a listed item's excerpt. */
export const FORGET_EXCERPT_CHARS = 160
/** A token as the daemon issues it: `<issued-at ms>.<64 hex>`; bounded like every request string. */
export const MAX_TOKEN_CHARS = 100

const AbsolutePath = BoundedPath.pipe(
  Schema.pattern(/^\//, { message: () => "must be an absolute path (starting with /)" })
)

/** The selector kinds, in the order a person would pick one. */
export const SELECTOR_KINDS = ["note", "context_session", "file", "session", "project", "time_range"] as const
export type SelectorKind = (typeof SELECTOR_KINDS)[number]

/** A selector's fields, each checked alone; `ForgetSelector` adds that exactly one kind is named. */
export const SelectorFields = Schema.Struct({
  note: Schema.optional(BoundedId.annotations({ description: "A note id: every revision of that note." })),
  context_session: Schema.optional(
    BoundedId.annotations({ description: "A blctx session (open_session's context_session_id): all of its notes." })
  ),
  file: Schema.optional(
    AbsolutePath.annotations({ description: "A transcript file, by its absolute path: every message read from it." })
  ),
  session: Schema.optional(
    BoundedId.annotations({
      description: "An agent's session id (a transcript session, any agent): every message of it, in every file."
    })
  ),
  project: Schema.optional(
    AbsolutePath.annotations({
      description:
        "An absolute directory: transcript messages whose working directory is in it or below, and notes whose session project is."
    })
  ),
  since: Schema.optional(
    BoundedDate.annotations({ description: "With until: messages and notes from this time on (inclusive)." })
  ),
  until: Schema.optional(BoundedDate.annotations({ description: "With since: messages and notes before this time." }))
})

/** Which kind a selector is, when it names exactly one. */
export const selectorKind = (s: typeof SelectorFields.Type): SelectorKind | undefined => {
  const kinds: Array<SelectorKind> = []
  if (s.note !== undefined) kinds.push("note")
  if (s.context_session !== undefined) kinds.push("context_session")
  if (s.file !== undefined) kinds.push("file")
  if (s.session !== undefined) kinds.push("session")
  if (s.project !== undefined) kinds.push("project")
  if (s.since !== undefined || s.until !== undefined) kinds.push("time_range")
  return kinds.length === 1 ? kinds[0] : undefined
}

/**
 * What to forget: exactly one of a note, a blctx session, a transcript file, an agent session, a
 * project, or a time range `[since, until)` (at least one bound). One struct with a check rather
 * than a union of structs: a union member silently drops keys it does not know, so a request
 * naming two kinds would forget by whichever member decoded first; here it is refused.
 */
export const ForgetSelector = SelectorFields.pipe(
  Schema.filter((s) =>
    selectorKind(s) === undefined
      ? "name exactly one of note, context_session, file, session, project, or a time range (since and/or until)"
      : undefined
  )
).annotations({ identifier: "ForgetSelector" })
export type ForgetSelector = typeof ForgetSelector.Type

/** The selector as the token binds it and the tombstone records it: keys sorted, nothing undefined. */
export const canonicalSelector = (s: ForgetSelector): string =>
  JSON.stringify(
    Object.fromEntries(
      Object.entries(s)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    )
  )

/** What one kind of source loses. */
export class SourceCounts extends Schema.Class<SourceCounts>("SourceCounts")({
  messages: Schema.Int,
  chunks: Schema.Int,
  /** Chunks that have a vector (each is removed from every vector collection). */
  vectors: Schema.Int,
  notes: Schema.Int,
  note_revisions: Schema.Int,
  /** Transcript sessions left with no message (authored_update: the blctx session itself). */
  sessions: Schema.Int,
  /** Transcript files some message of which is forgotten (their rows stay, to recognise them). */
  files: Schema.Int
}) {}

export class ForgetCounts extends Schema.Class<ForgetCounts>("ForgetCounts")({
  /** By source type: codex_transcript, claude_transcript, authored_update. */
  by_source: Schema.Record({ key: Schema.String, value: SourceCounts }),
  messages: Schema.Int,
  /** Hook bindings and the events drained for them (no text, but they say a session happened). */
  capture_bindings: Schema.Int,
  capture_events: Schema.Int
}) {}

/** One of the first items a preview lists. */
export class ForgetItem extends Schema.Class<ForgetItem>("ForgetItem")({
  context_id: Schema.String,
  source_type: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  source: SourceLocation,
  /** The first characters of the stored (redacted) text. */
  excerpt: Schema.String
}) {}

export class ForgetPreviewResponse extends Schema.Class<ForgetPreviewResponse>("ForgetPreviewResponse")({
  selector: ForgetSelector,
  counts: ForgetCounts,
  items: Schema.Array(ForgetItem),
  /** What the counts mean that a person might not expect (notes go whole; files stay known). */
  notes: Schema.Array(Schema.String),
  /** Pass it back with the same selector to forget exactly this; nothing is removed without it. */
  token: Schema.String,
  expires_at: Schema.String
}) {}

export const ForgetPreviewRequest = Schema.Struct({ selector: ForgetSelector })
export type ForgetPreviewRequest = typeof ForgetPreviewRequest.Type

export const ForgetRequest = Schema.Struct({
  selector: ForgetSelector,
  token: Schema.String.pipe(Schema.maxLength(MAX_TOKEN_CHARS)).annotations({
    description: "The token of the preview of this same selector (valid 10 minutes)."
  })
})
export type ForgetRequest = typeof ForgetRequest.Type

export class ForgetResponse extends Schema.Class<ForgetResponse>("ForgetResponse")({
  selector: ForgetSelector,
  counts: ForgetCounts,
  tombstone_id: Schema.Int,
  forgotten_at: Schema.String,
  /** The database file and its WAL were rewritten so no free page keeps the text (else it runs again shortly). */
  scrubbed: Schema.Boolean
}) {}

const PREVIEW_AGAIN =
  "Nothing was removed. Preview again (call without a token), check what it lists, then confirm with its token."

/** The token is not this preview's: wrong, from a daemon since restarted, or the selection changed. */
export class ForgetTokenMismatch extends Schema.TaggedError<ForgetTokenMismatch>()("ForgetTokenMismatch", {
  message: Schema.String,
  remediation: Schema.String
}) {
  static because = (reason: string) =>
    new ForgetTokenMismatch({
      message: `the token does not confirm this selection: ${reason}`,
      remediation: PREVIEW_AGAIN
    })
}

/** The preview is older than the token's lifetime. */
export class ForgetTokenExpired extends Schema.TaggedError<ForgetTokenExpired>()("ForgetTokenExpired", {
  message: Schema.String,
  remediation: Schema.String
}) {
  static issuedAt = (issuedAt: string) =>
    new ForgetTokenExpired({
      message: `the preview's token (issued ${issuedAt}) has expired: a token is valid for 10 minutes`,
      remediation: PREVIEW_AGAIN
    })
}

/** A selector the daemon cannot use (an unreadable date). */
export class InvalidForgetSelector extends Schema.TaggedError<InvalidForgetSelector>()("InvalidForgetSelector", {
  message: Schema.String,
  remediation: Schema.String
}) {}
