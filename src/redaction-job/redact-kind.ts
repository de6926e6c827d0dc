import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { JobStopped } from "../jobs/job-errors.js"
import { type JobContext, type JobKindOf, registerJobKind } from "../jobs/job-kind.js"
import { contentHash, sha256 } from "../notes/note-content.js"
import { pruneRemovedVectors } from "../notes/note-rows.js"
import type { Authorship, NoteKind } from "../notes/notes-contract.js"
import { REDACTION_RULES_VERSION, redactNullable, redactSecrets } from "../redaction/redact.js"
import { storeRulesVersion } from "../redaction/rules-version.js"
import { countOf, firstRowOf, rowsOf } from "../sql/sql-rows.js"
import { recutChunks } from "../store/chunk-rows.js"
import { makeDatabaseScrub } from "../store/database-scrub.js"
import type { StoreError } from "../store/store-error.js"
import { ChunkingFailed, type ImportFailure, storeFailure } from "../vectors/import-errors.js"
import { IndexingServices, type TextPiece } from "../vectors/import-services.js"
import type { VectorIndexError } from "../vectors/vector-index.js"

/** Rows read, redacted and rewritten per transaction. */
const ROWS_PER_STEP = 100

/** The job kind's name: queued by the daemon at start when the stored rules version is older. */
export const REDACT_KIND = "redact"

const RedactParams = Schema.Struct({})

const Phase = Schema.Literal("messages", "sessions", "projects", "compact")

const RedactCheckpoint = Schema.Struct({
  phase: Phase,
  /** Last rowid done in the current phase. */
  cursor: Schema.Int,
  /** Rows read so far, in every phase: the progress. */
  examined: Schema.Int,
  /** Rows rewritten because the rules found more in them. */
  rewritten: Schema.Int,
  /** Secrets the newer rules found. */
  secrets: Schema.Int
})
type RedactCheckpoint = typeof RedactCheckpoint.Type

const decodeTags = Schema.decodeUnknownOption(Schema.parseJson(Schema.Array(Schema.String)))

/** A message as stored, with the note revision it carries (if any): every string redaction covers. */
const MessageRow = Schema.Struct({
  id: Schema.Number,
  text: Schema.String,
  redactions: Schema.Number,
  cwd: Schema.NullOr(Schema.String),
  turn_id: Schema.NullOr(Schema.String),
  role: Schema.String,
  phase: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  chunked: Schema.Number,
  update_id: Schema.NullOr(Schema.String),
  note_session: Schema.NullOr(Schema.String),
  note_kind: Schema.NullOr(Schema.String),
  authorship: Schema.NullOr(Schema.String),
  tags: Schema.NullOr(Schema.String),
  source_text: Schema.NullOr(Schema.String)
})
type MessageRow = typeof MessageRow.Type
const messageRows = rowsOf(MessageRow)

/** What changes in one message (and its note revision) under the current rules. */
interface MessageRewrite {
  readonly id: number
  readonly chunked: boolean
  readonly text: string
  /** Secrets found in the text (added to the message's count). */
  readonly textSecrets: number
  /** Secrets found anywhere in the row. */
  readonly secrets: number
  readonly fields: {
    readonly cwd: string | null
    readonly turn_id: string | null
    readonly role: string
    readonly phase: string | null
    readonly timestamp: string | null
  }
  readonly note: Option.Option<{
    readonly update_id: string
    readonly tags: string
    readonly source_text: string | null
    readonly source_text_sha256: string | null
    readonly content_sha256: string
  }>
}

/**
 * The message redacted again, or none when the current rules find nothing more in it. Its text
 * hash is over the new text, and a note's content hash over its new stored values, as a note
 * written now would have.
 */
export const rewriteMessage = (row: MessageRow): Option.Option<MessageRewrite> => {
  let secrets = 0
  const field = (value: string | null) => {
    const redacted = redactNullable(value)
    secrets += redacted.total
    return redacted.text
  }
  const text = redactSecrets(row.text)
  const textSecrets = text.total
  secrets += textSecrets
  const fields = {
    cwd: field(row.cwd),
    turn_id: field(row.turn_id),
    role: field(row.role) ?? row.role,
    phase: field(row.phase),
    timestamp: field(row.timestamp)
  }
  const note = Option.flatMap(Option.fromNullable(row.update_id), (update_id) => {
    const tags = Option.getOrElse(decodeTags(row.tags ?? "[]"), () => [] as ReadonlyArray<string>)
    const newTags = tags.map((t) => field(t) ?? t)
    const source = field(row.source_text)
    if (textSecrets === 0 && source === row.source_text && newTags.every((t, i) => t === tags[i])) {
      return Option.none()
    }
    return Option.some({
      update_id,
      tags: JSON.stringify(newTags),
      source_text: source,
      source_text_sha256: source === null ? null : sha256(source),
      content_sha256: contentHash({
        session_id: row.note_session ?? "",
        kind: row.note_kind as NoteKind,
        authorship: row.authorship as Authorship,
        tags: newTags,
        text: text.text,
        source_text: source
      })
    })
  })
  if (secrets === 0) return Option.none()
  return Option.some({ id: row.id, chunked: row.chunked === 1, text: text.text, textSecrets, secrets, fields, note })
}

/**
 * `redact`: brings every stored text under the current redaction rules, so a secret stored before
 * a rule existed does not stay for good (an unchanged transcript is never read again). It reads
 * messages (text and metadata, and the note revision each carries: tags, source_text), transcript
 * sessions (cwd and the other metadata) and blctx sessions (project) in batches, each rewritten
 * row committed with the checkpoint. A rewritten message that has chunks is cut again: its old
 * chunks go (their FTS rows by trigger, the loaded model's vectors here, other indexes' through
 * `removed_chunks`) and the new ones wait for vectors, which repair embeds. Then the file is
 * scrubbed (FTS rebuilt, VACUUM, a truncating WAL checkpoint) so no older copy stays, and only
 * then is the rules version stored. A kill anywhere resumes, or starts over, to the same end.
 */
export const makeRedactKind = Effect.gen(function* () {
  const indexing = yield* IndexingServices
  const kind: JobKindOf<typeof RedactParams, typeof RedactCheckpoint, ImportFailure> = {
    name: REDACT_KIND,
    params: RedactParams,
    checkpoint: RedactCheckpoint,
    run: (_params, job) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const { chunking, embedding } = yield* indexing.current
        let state: RedactCheckpoint = Option.getOrElse(job.checkpoint, () => ({
          phase: "messages" as const,
          cursor: 0,
          examined: 0,
          rewritten: 0,
          secrets: 0
        }))
        const total = yield* countRows(sql)
        const step = stepper(job, Math.max(total, state.examined))

        if (state.phase === "messages") {
          while (true) {
            const rows = yield* readMessages(sql, state.cursor)
            if (rows.length === 0) break
            // One message at a time, yielding between them: a batch of long texts must not hold
            // the daemon's event loop (searches, pings) for the whole batch.
            const rewrites = (yield* Effect.forEach(rows, (r) =>
              Effect.zipLeft(
                Effect.sync(() => rewriteMessage(r)),
                Effect.yieldNow()
              )
            )).flatMap(Option.toArray)
            const last = rows.at(-1)?.id ?? state.cursor
            const chunked = rewrites.filter((r) => r.chunked)
            const pieces = yield* chunking
              .chunkAll(chunked.map((r) => r.text))
              .pipe(
                Effect.mapError((e) =>
                  ChunkingFailed.of(chunking.tokenizer, `messages up to ${last} (redacting again)`, e)
                )
              )
            const piecesOf = new Map(chunked.map((r, i) => [r.id, pieces[i] ?? []]))
            state = yield* step(
              `store the messages up to ${last}, redacted again`,
              Effect.forEach(rewrites, (r) => writeMessage(sql, r, chunking.tokenizer, piecesOf.get(r.id) ?? []), {
                discard: true
              }).pipe(Effect.zipRight(pruneRemovedVectors(sql, embedding))),
              advance(state, last, rows.length, rewrites)
            )
          }
          state = { ...state, phase: "sessions", cursor: 0 }
        }

        if (state.phase === "sessions") {
          while (true) {
            const rows = yield* readSessions(sql, state.cursor)
            if (rows.length === 0) break
            const rewrites = rows.flatMap((r) => Option.toArray(rewriteSession(r)))
            const last = rows.at(-1)?.rid ?? state.cursor
            state = yield* step(
              `store the sessions up to ${last}, redacted again`,
              Effect.forEach(rewrites, (r) => sql`UPDATE sessions SET ${sql.update(r.fields)} WHERE rowid = ${r.rid}`, {
                discard: true
              }),
              advance(state, last, rows.length, rewrites)
            )
          }
          state = { ...state, phase: "projects", cursor: 0 }
        }

        if (state.phase === "projects") {
          while (true) {
            const rows = yield* readProjects(sql, state.cursor)
            if (rows.length === 0) break
            const rewrites = rows.flatMap((r) => Option.toArray(rewriteProject(r)))
            const last = rows.at(-1)?.rid ?? state.cursor
            state = yield* step(
              `store the blctx sessions up to ${last}, redacted again`,
              Effect.forEach(
                rewrites,
                (r) => sql`UPDATE context_sessions SET project = ${r.project} WHERE rowid = ${r.rid}`,
                { discard: true }
              ),
              advance(state, last, rows.length, rewrites)
            )
          }
          state = { ...state, phase: "compact", cursor: 0 }
        }

        // No copy of the older text may stay in free pages, FTS segments or the WAL; VACUUM runs
        // outside any transaction. Done again after a kill before the version was stored.
        const scrub = makeDatabaseScrub({ sql, database: yield* databaseFile(sql) })
        yield* scrub.compact.pipe(Effect.mapError(compactFailure))
        state = yield* step("store the redaction rules version", storeRulesVersion(REDACTION_RULES_VERSION), state)
        yield* scrub.checkpoint.pipe(Effect.ignore)
        return {
          state: "completed" as const,
          counts: countsOf(state)
        }
      })
  }
  return registerJobKind(kind)
})

const countsOf = (state: RedactCheckpoint) => ({
  rows_examined: state.examined,
  rows_redacted_again: state.rewritten,
  redactions: state.secrets
})

const advance = (
  state: RedactCheckpoint,
  cursor: number,
  examined: number,
  rewrites: ReadonlyArray<{ readonly secrets: number }>
): RedactCheckpoint => ({
  ...state,
  cursor,
  examined: state.examined + examined,
  rewritten: state.rewritten + rewrites.length,
  secrets: state.secrets + rewrites.reduce((n, r) => n + r.secrets, 0)
})

/** Commits `work` with `next`, progress counted in rows read out of every row to read. */
const stepper =
  (job: JobContext<RedactCheckpoint>, total: number) =>
  (
    action: string,
    work: Effect.Effect<void, SqlError | VectorIndexError, SqlClient.SqlClient>,
    next: RedactCheckpoint
  ): Effect.Effect<RedactCheckpoint, ImportFailure | StoreError | JobStopped> =>
    job
      .commit(work.pipe(Effect.mapError(storeFailure(action))), {
        checkpoint: next,
        progressDone: next.examined,
        progressTotal: Math.max(total, next.examined),
        counts: countsOf(next)
      })
      .pipe(Effect.as(next))

const compactFailure = (e: SqlError | StoreError) =>
  e._tag === "SqlError" ? storeFailure("compact the database after redacting again")(e) : e

/** The file of the writer's database, named in a failed scrub. */
const databaseFile = (sql: SqlClient.SqlClient) =>
  databaseFileRow(sql`SELECT file FROM pragma_database_list WHERE name = 'main'`).pipe(
    Effect.map((row) => Option.match(row, { onNone: () => "the database", onSome: (r) => r.file })),
    Effect.mapError(storeFailure("name the database file"))
  )

const countRows = (sql: SqlClient.SqlClient) =>
  countOf(sql`SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM sessions)
      + (SELECT count(*) FROM context_sessions) AS n`).pipe(
    Effect.mapError(storeFailure("count the rows to redact again"))
  )

const readMessages = (sql: SqlClient.SqlClient, after: number) =>
  messageRows(sql`
    SELECT m.id, m.text, m.redactions, m.cwd, m.turn_id, m.role, m.phase, m.timestamp,
           EXISTS (SELECT 1 FROM chunks c WHERE c.message_id = m.id) AS chunked,
           u.update_id, u.session_id AS note_session, u.kind AS note_kind, u.authorship, u.tags, u.source_text
    FROM messages m LEFT JOIN authored_updates u ON u.note_id = m.note_id AND u.revision = m.note_revision
    WHERE m.id > ${after} ORDER BY m.id LIMIT ${ROWS_PER_STEP}`).pipe(
    Effect.mapError(storeFailure("read the messages to redact again"))
  )

/**
 * Rewrites one message: its text and metadata, its note revision's tags and source_text, and its
 * chunks when it has any (a superseded revision has none and gets none).
 */
const writeMessage = (
  sql: SqlClient.SqlClient,
  r: MessageRewrite,
  tokenizer: string,
  pieces: ReadonlyArray<TextPiece>
) =>
  Effect.gen(function* () {
    yield* sql`UPDATE messages SET ${sql.update({
      ...r.fields,
      text: r.text,
      text_sha256: sha256(r.text)
    })}, redactions = redactions + ${r.textSecrets} WHERE id = ${r.id}`
    if (Option.isSome(r.note)) {
      const { update_id, ...note } = r.note.value
      yield* sql`UPDATE authored_updates SET ${sql.update(note)} WHERE update_id = ${update_id}`
    }
    if (r.chunked) yield* recutChunks(sql, r.id, { tokenizer, pieces })
  })

const SessionRow = Schema.Struct({
  rid: Schema.Number,
  cwd: Schema.NullOr(Schema.String),
  cli_version: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.String),
  forked_from_id: Schema.NullOr(Schema.String),
  subagent: Schema.NullOr(Schema.String)
})
type SessionRow = typeof SessionRow.Type
const sessionRows = rowsOf(SessionRow)
const ProjectRow = Schema.Struct({ rid: Schema.Number, project: Schema.NullOr(Schema.String) })
const projectRows = rowsOf(ProjectRow)
const databaseFileRow = firstRowOf(Schema.Struct({ file: Schema.String }))

const readSessions = (sql: SqlClient.SqlClient, after: number) =>
  sessionRows(sql`SELECT rowid AS rid, cwd, cli_version, started_at, forked_from_id, subagent FROM sessions
    WHERE rowid > ${after} ORDER BY rowid LIMIT ${ROWS_PER_STEP}`).pipe(
    Effect.mapError(storeFailure("read the sessions to redact again"))
  )

/** A transcript session's metadata redacted again (its id is a key, kept as the importer stored it). */
const rewriteSession = (row: SessionRow) => {
  let secrets = 0
  const field = (value: string | null) => {
    const redacted = redactNullable(value)
    secrets += redacted.total
    return redacted.text
  }
  const fields = {
    cwd: field(row.cwd),
    cli_version: field(row.cli_version),
    started_at: field(row.started_at),
    forked_from_id: field(row.forked_from_id),
    subagent: field(row.subagent)
  }
  return secrets === 0 ? Option.none() : Option.some({ rid: row.rid, fields, secrets })
}

const readProjects = (sql: SqlClient.SqlClient, after: number) =>
  projectRows(sql`SELECT rowid AS rid, project FROM context_sessions
    WHERE rowid > ${after} ORDER BY rowid LIMIT ${ROWS_PER_STEP}`).pipe(
    Effect.mapError(storeFailure("read the blctx sessions to redact again"))
  )

const rewriteProject = (row: typeof ProjectRow.Type) => {
  const redacted = redactNullable(row.project)
  return redacted.total === 0
    ? Option.none()
    : Option.some({ rid: row.rid, project: redacted.text, secrets: redacted.total })
}
