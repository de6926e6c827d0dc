import { SqlClient, SqlSchema } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { insertChunk as insertChunkRow } from "../store/chunk-rows.js"
import type { SessionInfo } from "../transcripts/classification.js"
import type { TranscriptFormat } from "../transcripts/formats/transcript-format.js"
import { storeFailure } from "../vectors/import-errors.js"
import type { ImportEmbedding, TextPiece } from "../vectors/import-services.js"
import type { ChunkId, VectorPoint } from "../vectors/vector-index.js"
import { makePace } from "./event-loop-pace.js"
import { type ByteSpan, insideAny, readForgottenSpans } from "./forgotten-spans.js"
import type { SourceFileRow } from "./history-rows.js"
import type { MessageRow } from "./message-rows.js"
import type { Reconciliation, Relocation } from "./reconcile.js"
import type { Start } from "./transcript-reading.js"

/**
 * The writes of one prepared file, run by the import job in one transaction together with its
 * checkpoint. Each is a named effect; a database failure is mapped once, where the file's write is
 * built (`writeImport`, `recordMove`, `recordConflict`).
 */

/** Vectors written to the index per call. */
const VECTOR_BATCH = 256
/** Messages removed per statement: well within SQLite's limit on parameters, and paced. */
const REMOVE_BATCH = 64

/** Size, mtime and inode at open: what the next import compares to call a file unchanged. */
export interface FileStat {
  readonly size: number
  readonly mtime_ms: number
  readonly ino: number
}

/** What the classifying pass kept of a file, as far as its writes need it. */
export interface ReadContent {
  readonly digest: string
  readonly session: SessionInfo | null
  readonly resume: Start
  readonly records: number
  readonly unclassified: number
  readonly parseErrors: number
}

/** Everything one file's import writes, computed before the transaction opens. */
export interface ImportWrite {
  readonly path: string
  readonly sessionId: string | null
  readonly stat: FileStat
  readonly content: ReadContent
  readonly storedId: number | undefined
  readonly format: TranscriptFormat
  readonly tokenizer: string
  readonly embedding: Option.Option<ImportEmbedding>
  readonly changes: Reconciliation
  /** The chunks of each inserted message, in `changes.insert` order. */
  readonly pieces: ReadonlyArray<ReadonlyArray<TextPiece>>
  /** One vector per chunk in order, when the model embedded them. */
  readonly vectors: Option.Option<ReadonlyArray<Float32Array>>
}

type Pace = ReturnType<typeof makePace>

const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

const IdRow = Schema.Struct({ id: Schema.Number })
const decodeIdRows = Schema.decodeUnknown(Schema.Array(IdRow))

/** The id an `INSERT … RETURNING id` gave back; a statement that returned no row is a defect. */
const returnedId = (what: string) => (rows: ReadonlyArray<unknown>) =>
  Effect.flatMap(decodeIdRows(rows), ([row]) =>
    row === undefined ? Effect.dieMessage(`${what} row was not written`) : Effect.succeed(row.id)
  )

/** The `source_files` row of a file read to its end (`state` partial when records were not understood). */
const sourceValues = (w: ImportWrite) =>
  Effect.map(nowIso, (at) => ({
    path: w.path,
    session_id: w.sessionId,
    size: w.stat.size,
    mtime_ms: w.stat.mtime_ms,
    ino: w.stat.ino,
    indexed_bytes: w.stat.size,
    prefix_sha256: w.content.digest,
    resume_byte: w.content.resume.byte,
    resume_line: w.content.resume.line,
    resume_turn: w.content.resume.turn,
    records: w.content.records,
    unclassified: w.content.unclassified,
    parse_errors: w.content.parseErrors,
    state: w.content.unclassified > 0 ? "partial" : "indexed",
    note: null,
    imported_at: at
  }))

/** Writes the file's checkpoint row, new or updated; its id. */
const upsertSourceFile = (storedId: number | undefined, values: Record<string, string | number | null>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    storedId === undefined
      ? sql`INSERT INTO source_files ${sql.insert(values)} RETURNING id`.pipe(Effect.flatMap(returnedId("source file")))
      : sql`UPDATE source_files SET ${sql.update(values)} WHERE id = ${storedId}`.pipe(Effect.as(storedId))
  )

/** The session's row, pointing at this file; what the file does not say keeps its stored value. */
const upsertSession = (sessionId: string, fileId: number, session: SessionInfo | null) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO sessions (id, source_file_id, cwd, cli_version, started_at, forked_from_id, subagent)
                   VALUES (${sessionId}, ${fileId}, ${session?.cwd ?? null}, ${session?.cli_version ?? null},
                           ${session?.started_at ?? null}, ${session?.forked_from_id ?? null}, ${session?.subagent ?? null})
                   ON CONFLICT (id) DO UPDATE SET source_file_id = excluded.source_file_id,
                     cwd = coalesce(excluded.cwd, sessions.cwd), cli_version = coalesce(excluded.cli_version, sessions.cli_version),
                     started_at = coalesce(excluded.started_at, sessions.started_at),
                     forked_from_id = coalesce(excluded.forked_from_id, sessions.forked_from_id),
                     subagent = coalesce(excluded.subagent, sessions.subagent)`
  )

/** The stored cwd of a session, for messages of a file that does not name it. */
const storedCwd = (sessionId: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findOne({
      Request: Schema.NullOr(Schema.String),
      Result: Schema.Struct({ cwd: Schema.NullOr(Schema.String) }),
      execute: (id) => sql`SELECT cwd FROM sessions WHERE id = ${id}`
    })(sessionId)
  ).pipe(Effect.map(Option.match({ onNone: () => null, onSome: (row) => row.cwd })))

/** Removes messages and their chunks, a batch per statement. */
const removeMessages = (ids: ReadonlyArray<number>, pace: Pace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (let i = 0; i < ids.length; i += REMOVE_BATCH) {
      const batch = ids.slice(i, i + REMOVE_BATCH)
      yield* sql`DELETE FROM chunks WHERE message_id IN ${sql.in(batch)}`
      yield* sql`DELETE FROM messages WHERE id IN ${sql.in(batch)}`
      yield* pace(0, batch.length)
    }
  })

/** Removes vectors of deleted chunks in the same transaction (same connection for the vector tables). */
const pruneRemovedVectors = (embedding: Option.Option<ImportEmbedding>) =>
  Effect.gen(function* () {
    if (Option.isNone(embedding)) return
    const sql = yield* SqlClient.SqlClient
    const e = embedding.value
    const removed = yield* SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ chunk_id: Schema.Number }),
      execute: (key) => sql`SELECT chunk_id FROM removed_chunks WHERE vector_fingerprint = ${key}`
    })(e.fingerprint.key)
    if (removed.length === 0) return
    const ids = removed.map((r) => r.chunk_id)
    yield* e.vectors.remove(e.fingerprint, ids as Array<ChunkId>)
    yield* sql`DELETE FROM removed_chunks WHERE chunk_id IN ${sql.in(ids)}`
  })

/** Moves kept messages to their new positions. */
const relocateMessages = (relocate: ReadonlyArray<Relocation>, pace: Pace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Two passes: a kept row may move to a position another kept row still occupies.
    for (const { id } of relocate) {
      yield* sql`UPDATE messages SET byte_start = ${-id} WHERE id = ${id}`
      yield* pace(0)
    }
    for (const { id, row } of relocate) {
      yield* sql`UPDATE messages SET line = ${row.line}, byte_start = ${row.byte_start}, byte_end = ${row.byte_end},
                 turn_number = ${row.turn_number}, turn_id = ${row.turn_id}, timestamp = ${row.timestamp}
                 WHERE id = ${id}`
      yield* pace(0)
    }
  })

/** Vectors go to the index in batches, in the same transaction as their chunks' rows. */
const makeVectorBatch = (embedding: Option.Option<ImportEmbedding>) => {
  let points: Array<VectorPoint> = []
  const flush = Effect.suspend(() => {
    const batch = points
    points = []
    return batch.length === 0 || Option.isNone(embedding)
      ? Effect.void
      : embedding.value.vectors.upsert(embedding.value.fingerprint, batch)
  })
  const add = (point: VectorPoint) =>
    Effect.suspend(() => {
      points.push(point)
      return points.length >= VECTOR_BATCH ? flush : Effect.void
    })
  return { add, flush }
}

/** Where the inserted messages go and what they carry besides their own fields. */
interface InsertTarget {
  readonly fileId: number
  readonly sessionId: string | null
  readonly cwd: string | null
  readonly format: TranscriptFormat
  readonly tokenizer: string
  /** The fingerprint key stored with each chunk when its vector is written, else null. */
  readonly vectorKey: string | null
}

// The two inserts below run once per message and once per chunk: the id they return is decoded
// by `returnedId`, a one-field schema, measured no slower in `bench importer` than reading it unchecked.

/** Inserts one message; its id. Columns by name, never by position: columns added later keep their defaults. */
const insertMessage = (target: InsertTarget, row: MessageRow) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO messages ${sql.insert({
      source_file_id: target.fileId,
      session_id: target.sessionId,
      turn_number: row.turn_number,
      turn_id: row.turn_id,
      role: row.role,
      kind: row.kind,
      phase: row.phase,
      text: row.text,
      text_sha256: row.text_sha256,
      redactions: row.redactions,
      cwd: target.cwd,
      timestamp: row.timestamp,
      line: row.line,
      byte_start: row.byte_start,
      byte_end: row.byte_end,
      source_type: target.format.sourceType,
      agent: target.format.agent
    })} RETURNING id`.pipe(Effect.flatMap(returnedId("message")))
  )

/** Inserts one chunk of a message; its id. */
const insertChunk = (target: InsertTarget, messageId: number, ordinal: number, piece: TextPiece) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    insertChunkRow(sql, {
      messageId,
      ordinal,
      piece,
      tokenizer: target.tokenizer,
      vectorFingerprint: target.vectorKey
    }).pipe(Effect.flatMap(returnedId("chunk")))
  )

/**
 * Inserts the new messages with their chunks and vectors, skipping any inside a span forgotten
 * since the file was read (`forgotten`); `vectors` holds one vector per chunk of every message
 * in order, so a skipped message's chunks are skipped there too.
 */
const insertMessages = (w: ImportWrite, target: InsertTarget, forgotten: ReadonlyArray<ByteSpan>, pace: Pace) =>
  Effect.gen(function* () {
    const batch = makeVectorBatch(w.embedding)
    let vectorCursor = 0
    for (const [index, row] of w.changes.insert.entries()) {
      const pieces = w.pieces[index] ?? []
      if (forgotten.length > 0 && insideAny(forgotten, row)) {
        vectorCursor += pieces.length
        continue
      }
      const messageId = yield* insertMessage(target, row)
      for (const [ordinal, piece] of pieces.entries()) {
        const chunkId = yield* insertChunk(target, messageId, ordinal, piece)
        const vector = Option.isSome(w.vectors) ? w.vectors.value[vectorCursor] : undefined
        if (vector !== undefined) yield* batch.add({ id: chunkId as ChunkId, vector })
        vectorCursor++
      }
      yield* pace(row.text.length)
    }
    yield* batch.flush
  })

/**
 * The rows of one imported file, in the import's transaction. They are written yielding to the
 * event loop as they go (`makePace`): the transaction stays open meanwhile, and the connection's
 * other users (notes, capture) wait for its end as before, since the SQLite client lets one
 * transaction at a time use it.
 */
export const writeImport = (w: ImportWrite) =>
  Effect.gen(function* () {
    const pace = makePace()
    const fileId = yield* upsertSourceFile(w.storedId, yield* sourceValues(w))
    if (w.sessionId !== null) yield* upsertSession(w.sessionId, fileId, w.content.session)
    const cwd = w.content.session?.cwd ?? (yield* storedCwd(w.sessionId))
    yield* removeMessages(w.changes.remove, pace)
    yield* pruneRemovedVectors(w.embedding)
    yield* relocateMessages(w.changes.relocate, pace)
    // A forget may have committed since the file was read: its spans are read again here, in
    // the write's transaction, so a message it removed is not stored again by this import. A
    // file new to the index has none.
    const forgotten = w.storedId === undefined ? [] : yield* readForgottenSpans(fileId)
    const vectorKey = Option.isSome(w.vectors) && Option.isSome(w.embedding) ? w.embedding.value.fingerprint.key : null
    const target = { fileId, sessionId: w.sessionId, cwd, format: w.format, tokenizer: w.tokenizer, vectorKey }
    yield* insertMessages(w, target, forgotten, pace)
  }).pipe(Effect.mapError(storeFailure(`store the rows of ${w.path}`)))

/** A file moved and unchanged: only its source reference changes. */
export const recordMove = (path: string, stat: FileStat, from: SourceFileRow) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`UPDATE source_files SET path = ${path}, mtime_ms = ${stat.mtime_ms} WHERE id = ${from.id}`)
  ).pipe(Effect.mapError(storeFailure(`record that ${from.path} moved to ${path}`)))

/** The second file claiming a session, recorded so coverage can show it; none of its messages are stored. */
export const recordConflict = (path: string, stat: FileStat, note: string, digest: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const at = yield* nowIso
    const values = {
      path,
      session_id: null,
      size: stat.size,
      mtime_ms: stat.mtime_ms,
      ino: stat.ino,
      indexed_bytes: 0,
      prefix_sha256: digest,
      resume_byte: 0,
      resume_line: 1,
      resume_turn: 0,
      records: 0,
      unclassified: 0,
      parse_errors: 0,
      state: "conflict",
      note,
      imported_at: at
    }
    yield* sql`INSERT INTO source_files ${sql.insert(values)}
               ON CONFLICT (path) DO UPDATE SET ${sql.update(values, ["path"])}`
  }).pipe(Effect.mapError(storeFailure(`record the conflict of ${path}`)))
