import { type SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { contentHash, sha256, storedProject } from "../notes/note-content.js"
import type { NoteChunks } from "../notes/note-rows.js"
import { insertRevision, pruneRemovedVectors } from "../notes/note-rows.js"
import { redactSecrets } from "../redaction/redact.js"
import type { ContextSessionLine, NoteRevisionLine } from "../retrieval/export-format.js"
import { countOf, firstRowOf } from "../sql/sql-rows.js"
import { insertPendingChunks } from "../store/chunk-rows.js"
import type { StoreError } from "../store/store-error.js"
import { makeWriterErrors } from "../store/writer-errors.js"
import type { ImportEmbedding } from "../vectors/import-services.js"
import { type ImportedRevision, type ImportedSession, ImportProblem } from "./import-contract.js"

const sessionProject = firstRowOf(Schema.Struct({ project: Schema.NullOr(Schema.String) }))

/** A revision as it will be stored here: redacted again, in the session it maps to. */
export interface RestoredRevision {
  readonly line: number
  readonly note_id: string
  readonly revision: number
  readonly update_id: string
  readonly session_id: string
  readonly kind: NoteRevisionLine["kind"]
  readonly authorship: NoteRevisionLine["authorship"]
  readonly tags: ReadonlyArray<string>
  readonly text: string
  readonly text_redactions: number
  readonly source_text: string | null
  readonly created_at: string
  readonly content_sha256: string
}

/**
 * The line's own hash check, then the values as they are stored here: every string redacted
 * again (a file is never trusted to be redacted; redaction is idempotent), the session mapped,
 * the content hash computed over the stored values as `log_update` does.
 */
export const restoredRevision = (
  { line, revision: r }: ImportedRevision,
  sessionId: string
): RestoredRevision | ImportProblem => {
  const exported = contentHash({
    session_id: r.session_id,
    kind: r.kind,
    authorship: r.authorship,
    tags: r.tags,
    text: r.text,
    source_text: r.source_text
  })
  if (exported !== r.content_sha256) {
    return new ImportProblem({
      line,
      kind: "refused",
      note_id: r.note_id,
      revision: r.revision,
      reason: "content_sha256 is not the hash of the line's content (the file was altered)"
    })
  }
  const text = redactSecrets(r.text)
  const content = {
    session_id: sessionId,
    kind: r.kind,
    authorship: r.authorship,
    tags: r.tags.map((t) => redactSecrets(t).text),
    text: text.text,
    source_text: r.source_text === null ? null : redactSecrets(r.source_text).text
  }
  return {
    ...content,
    line,
    note_id: r.note_id.toLowerCase(),
    revision: r.revision,
    update_id: r.update_id.toLowerCase(),
    text_redactions: text.total,
    created_at: r.created_at,
    content_sha256: contentHash(content)
  }
}

const SessionRow = Schema.Struct({ id: Schema.String, binding_key: Schema.String })
const StoredRevisionRow = Schema.Struct({
  update_id: Schema.String,
  note_id: Schema.String,
  revision: Schema.Int,
  content_sha256: Schema.String
})

/** What one note's restore did. */
export interface NoteRestore {
  readonly imported: number
  readonly alreadyPresent: number
  readonly forgotten: number
  readonly problems: ReadonlyArray<ImportProblem>
  /** The message of the note's current revision when this restore gave it new chunks (to embed). */
  readonly chunkedMessage: number | null
}

/**
 * The writes of `import-notes` on the daemon's writer connection, following the storage of
 * notes: every revision its own `messages` row (source type `authored_update`, the session's
 * project as cwd) and `authored_updates` row with the original ids and times; chunks only on
 * the current (highest) revision, whose superseded predecessors lose theirs in the same
 * transaction. Sessions are restored first, each once: one that exists is reused, one whose
 * binding key this installation already has is mapped to that session.
 */
export const makeNotesImportStore = (options: { readonly sql: SqlClient.SqlClient; readonly database: string }) => {
  const { sql, database } = options

  const { transaction } = makeWriterErrors({
    sql,
    database,
    afterFreeing: "import again (notes already restored are skipped)"
  })

  const sessionById = SqlSchema.findOne({
    Request: Schema.String,
    Result: SessionRow,
    execute: (id) => sql`SELECT id, binding_key FROM context_sessions WHERE id = ${id}`
  })
  const sessionByBinding = SqlSchema.findOne({
    Request: Schema.String,
    Result: SessionRow,
    execute: (key) => sql`SELECT id, binding_key FROM context_sessions WHERE binding_key = ${key}`
  })
  const revisionByUpdate = SqlSchema.findOne({
    Request: Schema.String,
    Result: StoredRevisionRow,
    execute: (id) =>
      sql`SELECT update_id, note_id, revision, content_sha256 FROM authored_updates WHERE update_id = ${id}`
  })
  const revisionsOfNote = SqlSchema.findAll({
    Request: Schema.String,
    Result: StoredRevisionRow,
    execute: (noteId) =>
      sql`SELECT update_id, note_id, revision, content_sha256 FROM authored_updates WHERE note_id = ${noteId}`
  })

  /**
   * Restores the batch's sessions, parents first. Returns the session each exported id maps to
   * here, and how many were created or mapped by binding key. A parent neither in the file nor
   * here becomes NULL.
   */
  const restoreSessions = (sessions: ReadonlyArray<ImportedSession>) =>
    transaction(
      "could not restore the sessions",
      Effect.gen(function* () {
        const mapped = new Map<string, string>()
        let created = 0
        let byBinding = 0
        for (const { session } of sessions) {
          const id = session.id.toLowerCase()
          if (mapped.has(id)) continue
          const existing = yield* sessionById(id)
          if (Option.isSome(existing)) {
            mapped.set(id, id)
            continue
          }
          const binding = session.binding_key.toLowerCase()
          const bound = yield* sessionByBinding(binding)
          if (Option.isSome(bound)) {
            mapped.set(id, bound.value.id)
            byBinding++
            continue
          }
          yield* sql`INSERT INTO context_sessions ${sql.insert({
            id,
            binding_key: binding,
            project: session.project === null ? null : storedProject(session.project),
            parent_session_id: yield* parentOf(session, mapped),
            created_at: session.created_at
          })}`
          mapped.set(id, id)
          created++
        }
        return { mapped, created, byBinding } as const
      })
    )

  const parentOf = (session: ContextSessionLine, mapped: ReadonlyMap<string, string>) =>
    Effect.gen(function* () {
      if (session.parent_session_id === null) return null
      const parent = session.parent_session_id.toLowerCase()
      const known = mapped.get(parent)
      if (known !== undefined) return known
      return Option.isSome(yield* sessionById(parent)) ? parent : null
    })

  /** The session a revision's exported session id is here, if any. */
  const localSession = (exportedId: string, mapped: ReadonlyMap<string, string>) =>
    Effect.gen(function* () {
      const id = exportedId.toLowerCase()
      const known = mapped.get(id)
      if (known !== undefined) return Option.some(known)
      return Option.map(yield* sessionById(id), (s) => s.id)
    })

  /**
   * Restores one note's revisions (in revision order) in one transaction: all of its new ones,
   * or, when one of them is refused or conflicts, none. `chunks` are the cut text of its highest
   * revision in `revisions`, used when that revision becomes the note's current one.
   */
  const restoreNote = (
    noteId: string,
    revisions: ReadonlyArray<ImportedRevision>,
    mapped: ReadonlyMap<string, string>,
    chunks: (text: string) => Effect.Effect<NoteChunks>,
    embedding: Option.Option<ImportEmbedding>
  ): Effect.Effect<NoteRestore, StoreError> =>
    Effect.gen(function* () {
      const ordered = [...revisions].sort((a, b) => a.revision.revision - b.revision.revision)
      // Chunking runs outside the transaction (a tokenizer is slow): the highest revision's text.
      const highest = ordered.at(-1)
      const highestText = highest === undefined ? "" : redactSecrets(highest.revision.text).text
      const cut = highest === undefined ? null : yield* chunks(highestText)
      return yield* transaction(
        "could not restore the note",
        Effect.gen(function* () {
          const forgotten = yield* countOf(sql`SELECT count(*) AS n FROM forgotten_notes WHERE note_id = ${noteId}`)
          if (forgotten > 0) {
            return { imported: 0, alreadyPresent: 0, forgotten: ordered.length, problems: [], chunkedMessage: null }
          }
          const stored = yield* revisionsOfNote(noteId)
          const storedRevisions = new Map(stored.map((r) => [r.revision, r]))
          const problems: Array<ImportProblem> = []
          const fresh: Array<RestoredRevision> = []
          let alreadyPresent = 0
          for (const item of ordered) {
            const problem = (kind: "conflict" | "refused", reason: string) =>
              problems.push(
                new ImportProblem({ line: item.line, kind, note_id: noteId, revision: item.revision.revision, reason })
              )
            const session = yield* localSession(item.revision.session_id, mapped)
            if (Option.isNone(session)) {
              problem("conflict", `its session ${item.revision.session_id} is neither in the file nor here`)
              continue
            }
            const restored = restoredRevision(item, session.value)
            if (restored instanceof ImportProblem) {
              problems.push(restored)
              continue
            }
            const byUpdate = yield* revisionByUpdate(restored.update_id)
            if (Option.isSome(byUpdate)) {
              const at = byUpdate.value
              if (at.note_id !== noteId || at.revision !== restored.revision) {
                problem(
                  "conflict",
                  `update_id ${restored.update_id} is stored here as note ${at.note_id} revision ${at.revision}`
                )
              } else if (at.content_sha256 !== restored.content_sha256) {
                problem("conflict", `update_id ${restored.update_id} is stored here with other content`)
              } else {
                alreadyPresent++
              }
              continue
            }
            const taken = storedRevisions.get(restored.revision)
            if (taken !== undefined) {
              problem(
                "conflict",
                `revision ${restored.revision} of note ${noteId} is stored here as update ${taken.update_id}`
              )
              continue
            }
            const previous = restored.revision - 1
            const seen = (r: number) =>
              storedRevisions.has(r) || fresh.some((f) => f.revision === r) || problems.some((p) => p.revision === r)
            // A gap, unless the previous revision is in this batch (then it decides the note).
            if (previous > 0 && !seen(previous)) {
              problem("conflict", `revision ${previous} of note ${noteId} is neither in the file nor here`)
              continue
            }
            fresh.push(restored)
          }
          if (problems.length > 0) {
            const heldBack = fresh.map(
              (f) =>
                new ImportProblem({
                  line: f.line,
                  kind: "held_back",
                  note_id: noteId,
                  revision: f.revision,
                  reason: "another revision of this note was not restored, so none of its new revisions were"
                })
            )
            return {
              imported: 0,
              alreadyPresent,
              forgotten: 0,
              problems: [...problems, ...heldBack],
              chunkedMessage: null
            }
          }
          if (fresh.length === 0) {
            return { imported: 0, alreadyPresent, forgotten: 0, problems: [], chunkedMessage: null }
          }
          const messageIds = new Map<number, number>()
          for (const r of fresh) {
            const project = yield* sessionProject(sql`
              SELECT project FROM context_sessions WHERE id = ${r.session_id}`)
            const messageId = yield* insertRevision(sql, {
              ...r,
              note_id: noteId,
              text_sha256: sha256(r.text),
              source_text_sha256: r.source_text === null ? null : sha256(r.source_text),
              project: Option.match(project, { onNone: () => null, onSome: (row) => row.project })
            })
            messageIds.set(r.revision, messageId)
          }
          // Only the current revision has chunks: a restored newer revision supersedes the
          // stored current one, whose chunks (FTS rows by trigger, vectors below) go.
          const top = Math.max(...fresh.map((f) => f.revision), ...stored.map((s) => s.revision))
          const current = messageIds.get(top)
          let chunkedMessage: number | null = null
          if (current !== undefined && cut !== null && highest?.revision.revision === top) {
            yield* sql`DELETE FROM chunks WHERE message_id IN (
              SELECT id FROM messages WHERE note_id = ${noteId} AND note_revision <> ${top})`
            yield* insertPendingChunks(sql, current, cut)
            chunkedMessage = current
            yield* pruneRemovedVectors(sql, embedding).pipe(Effect.orDie)
          }
          return { imported: fresh.length, alreadyPresent, forgotten: 0, problems: [], chunkedMessage }
        })
      )
    })

  return { restoreSessions, restoreNote } as const
}

export type NotesImportStore = ReturnType<typeof makeNotesImportStore>
