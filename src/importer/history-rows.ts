import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { storeFailure } from "./import-errors.js"

/** A `source_files` row: a transcript's checkpoint. */
export const SourceFileRow = Schema.Struct({
  id: Schema.Number,
  path: Schema.String,
  session_id: Schema.NullOr(Schema.String),
  size: Schema.Number,
  mtime_ms: Schema.Number,
  ino: Schema.Number,
  indexed_bytes: Schema.Number,
  prefix_sha256: Schema.String,
  resume_byte: Schema.Number,
  resume_line: Schema.Number,
  resume_turn: Schema.Number,
  state: Schema.Literal("indexed", "partial", "conflict")
})
export type SourceFileRow = typeof SourceFileRow.Type

/** A stored message, as far as reconciling a re-read file needs it. */
export const StoredMessage = Schema.Struct({
  id: Schema.Number,
  byte_start: Schema.Number,
  text_sha256: Schema.String,
  turn_number: Schema.Number,
  turn_id: Schema.NullOr(Schema.String)
})
export type StoredMessage = typeof StoredMessage.Type

const SOURCE_COLUMNS = `id, path, session_id, size, mtime_ms, ino, indexed_bytes, prefix_sha256, resume_byte,
  resume_line, resume_turn, state`

/** Reads fail with a `HistoryStoreError` saying what was being looked up. */

export const findSourceByPath = (path: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: SourceFileRow,
      execute: (p) => sql`SELECT ${sql.literal(SOURCE_COLUMNS)} FROM source_files WHERE path = ${p}`
    })(path)
  ).pipe(
    Effect.map((rows) => rows[0]),
    Effect.mapError(storeFailure(`look up the stored state of ${path}`))
  )

export const findSourcesByInode = (ino: number, path: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Struct({ ino: Schema.Number, path: Schema.String }),
      Result: SourceFileRow,
      execute: (r) =>
        sql`SELECT ${sql.literal(SOURCE_COLUMNS)} FROM source_files WHERE ino = ${r.ino} AND path <> ${r.path}`
    })({ ino, path })
  ).pipe(Effect.mapError(storeFailure(`look up the sources sharing the inode of ${path}`)))

export const findSourcesBySession = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: SourceFileRow,
      execute: (id) => sql`SELECT ${sql.literal(SOURCE_COLUMNS)} FROM source_files WHERE session_id = ${id}`
    })(sessionId)
  ).pipe(Effect.mapError(storeFailure(`look up the sources of session ${sessionId}`)))

export const storedMessagesFrom = (sourceFileId: number, fromByte: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Struct({ file: Schema.Number, from: Schema.Number }),
      Result: StoredMessage,
      execute: (r) => sql`SELECT id, byte_start, text_sha256, turn_number, turn_id FROM messages
                          WHERE source_file_id = ${r.file} AND byte_start >= ${r.from}`
    })({ file: sourceFileId, from: fromByte })
  ).pipe(Effect.mapError(storeFailure(`read the stored messages of source ${sourceFileId}`)))
