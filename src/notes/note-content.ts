import { createHash } from "node:crypto"
import { redactSecrets } from "../redaction/redact.js"
import type { Authorship, LogUpdateRequest, NoteKind, OpenSessionRequest, UpdateNoteRequest } from "./notes-contract.js"

/** The role stored on a note's message: the agent wrote the text, whoever asked for it. */
export const NOTE_ROLE = "assistant"

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** A project directory as stored and compared: secrets redacted, trailing slashes removed (`/` stays). */
export const storedProject = (project: string): string => redactSecrets(project.replace(/(.)\/+$/, "$1")).text

/** The session metadata as stored, ids lower-cased. */
export const sessionBinding = (request: OpenSessionRequest) => ({
  binding_key: request.binding_key.toLowerCase(),
  project: request.project === undefined ? null : storedProject(request.project),
  parent_session_id: request.parent_session_id?.toLowerCase() ?? null
})

/**
 * An update as it is stored: every string a person or agent wrote (text, tags, source_text)
 * redacted before anything is stored, chunked or embedded, like transcript text. Its content
 * hash is over the stored values, so the same call repeated hashes the same, and no hash of an
 * unredacted secret is ever kept.
 */
export interface StoredUpdate {
  readonly update_id: string
  readonly session_id: string
  readonly kind: NoteKind
  readonly authorship: Authorship
  readonly text: string
  readonly text_sha256: string
  readonly tags: ReadonlyArray<string>
  readonly source_text: string | null
  readonly source_text_sha256: string | null
  /** Secrets replaced in the text (the message row's count). */
  readonly text_redactions: number
  /** Secrets replaced anywhere: text, tags and source_text. */
  readonly redactions: number
  readonly content_sha256: string
}

/** The fields whose stored values an update's content is: what "the same content" compares. */
export const CONTENT_FIELDS = ["session_id", "kind", "authorship", "tags", "text", "source_text"] as const
export type ContentField = (typeof CONTENT_FIELDS)[number]

export const contentHash = (content: Pick<StoredUpdate, ContentField>): string =>
  sha256(JSON.stringify(CONTENT_FIELDS.map((field) => content[field])))

export const storedUpdate = (request: LogUpdateRequest): StoredUpdate => {
  const text = redactSecrets(request.text)
  const tags = request.tags.map(redactSecrets)
  const source = request.source_text === undefined ? null : redactSecrets(request.source_text)
  const content = {
    session_id: request.session_id.toLowerCase(),
    kind: request.kind,
    authorship: request.authorship,
    tags: tags.map((t) => t.text),
    text: text.text,
    source_text: source?.text ?? null
  }
  return {
    ...content,
    update_id: request.update_id.toLowerCase(),
    text_sha256: sha256(text.text),
    source_text_sha256: source === null ? null : sha256(source.text),
    text_redactions: text.total,
    redactions: text.total + tags.reduce((n, t) => n + t.total, 0) + (source?.total ?? 0),
    content_sha256: contentHash(content)
  }
}

/** The content fields on which two stored updates differ. */
export const differingFields = (
  a: Pick<StoredUpdate, ContentField>,
  b: Pick<StoredUpdate, ContentField>
): ReadonlyArray<ContentField> =>
  CONTENT_FIELDS.filter((field) => JSON.stringify(a[field]) !== JSON.stringify(b[field]))

/** What a revision keeps of its note when the update leaves it out. */
export interface NoteDefaults {
  readonly session_id: string
  readonly kind: NoteKind
  readonly tags: ReadonlyArray<string>
}

/**
 * A revision as it is stored: an update of the note's kind, in the given session or the note's
 * own, with the given tags or the current ones, redacted and hashed exactly like a logged note.
 * A revision records no source_text.
 */
export const storedRevision = (request: UpdateNoteRequest, note: NoteDefaults, updateId: string): StoredUpdate =>
  storedUpdate({
    session_id: request.session_id ?? note.session_id,
    update_id: request.update_id ?? updateId,
    text: request.text,
    tags: request.tags ?? note.tags,
    kind: note.kind,
    authorship: request.authorship
  })
