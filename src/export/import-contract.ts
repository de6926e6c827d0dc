import { Schema } from "effect"
import { ContextSessionLine, NoteRevisionLine } from "../retrieval/export-format.js"

/**
 * `ImportNotes`: one batch of an export file's sessions and notes, restored by the daemon on its
 * writer connection. The lines are the export format's own schemas, each with its line number in
 * the file so every refusal names it. Defined once: the RPC, its handler, the client and the CLI
 * take their types from here.
 */

/** Bounds on one batch, well under the daemon's 4 MiB request line (note texts are at most 32,000 characters). */
export const MAX_IMPORT_BATCH_REVISIONS = 50
export const MAX_IMPORT_BATCH_SESSIONS = 1_000
/** The CLI also closes a batch once its JSON passes this many characters. */
export const MAX_IMPORT_BATCH_CHARS = 2_000_000

const LineNumber = Schema.Int.pipe(Schema.positive())

export const ImportedSession = Schema.Struct({ line: LineNumber, session: ContextSessionLine })
export type ImportedSession = typeof ImportedSession.Type

export const ImportedRevision = Schema.Struct({ line: LineNumber, revision: NoteRevisionLine })
export type ImportedRevision = typeof ImportedRevision.Type

export const ImportNotesRequest = Schema.Struct({
  /** The sessions the batch's revisions were logged in, and their ancestors, parents first. */
  sessions: Schema.Array(ImportedSession).pipe(Schema.maxItems(MAX_IMPORT_BATCH_SESSIONS)),
  /** Note revisions in file order; a note's revisions are written together, in one transaction. */
  revisions: Schema.Array(ImportedRevision).pipe(Schema.maxItems(MAX_IMPORT_BATCH_REVISIONS))
})
export type ImportNotesRequest = typeof ImportNotesRequest.Type

/** Why a line was not imported. */
export const ImportProblemKind = Schema.Literal(
  /** The update id, or the note's revision, is stored here with other content: nothing overwritten. */
  "conflict",
  /** The line's content_sha256 is not the hash of its content: the file was altered. */
  "refused",
  /** New, but another revision of its note was refused or conflicts: a note is restored whole or not at all. */
  "held_back"
)

export class ImportProblem extends Schema.Class<ImportProblem>("ImportProblem")({
  line: Schema.Int,
  kind: ImportProblemKind,
  note_id: Schema.String,
  revision: Schema.Int,
  reason: Schema.String
}) {}

export class ImportNotesResponse extends Schema.Class<ImportNotesResponse>("ImportNotesResponse")({
  /** Notes that gained at least one revision. */
  notes_imported: Schema.Int,
  revisions_imported: Schema.Int,
  /** Revisions already stored with the same content: nothing written. */
  already_present: Schema.Int,
  /** Revisions of notes this installation forgot: never restored. */
  forgotten: Schema.Int,
  sessions_created: Schema.Int,
  /** Sessions whose binding key this installation already had under another id: their notes go there. */
  sessions_mapped: Schema.Int,
  problems: Schema.Array(ImportProblem)
}) {}
