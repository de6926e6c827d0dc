import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { storeFailure } from "../vectors/import-errors.js"

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

/** The rows a read returns, each decoded as `row`; a failure is a `HistoryStoreError` saying what was looked up. */
const lookUp = <A, I>(
  row: Schema.Schema<A, I>,
  action: string,
  read: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({ Request: Schema.Void, Result: row, execute: () => read(sql) })(undefined)
  ).pipe(Effect.mapError(storeFailure(action)))

const sourceColumns = (sql: SqlClient.SqlClient) => sql.literal(SOURCE_COLUMNS)

export const findSourceByPath = (path: string) =>
  lookUp(
    SourceFileRow,
    `look up the stored state of ${path}`,
    (sql) => sql`SELECT ${sourceColumns(sql)} FROM source_files WHERE path = ${path}`
  ).pipe(Effect.map((rows) => rows[0]))

export const findSourcesByInode = (ino: number, path: string) =>
  lookUp(
    SourceFileRow,
    `look up the sources sharing the inode of ${path}`,
    (sql) => sql`SELECT ${sourceColumns(sql)} FROM source_files WHERE ino = ${ino} AND path <> ${path}`
  )

export const findSourcesBySession = (sessionId: string) =>
  lookUp(
    SourceFileRow,
    `look up the sources of session ${sessionId}`,
    (sql) => sql`SELECT ${sourceColumns(sql)} FROM source_files WHERE session_id = ${sessionId}`
  )

export const storedMessagesFrom = (sourceFileId: number, fromByte: number) =>
  lookUp(
    StoredMessage,
    `read the stored messages of source ${sourceFileId}`,
    (sql) => sql`SELECT id, byte_start, text_sha256, turn_number, turn_id FROM messages
                 WHERE source_file_id = ${sourceFileId} AND byte_start >= ${fromByte}`
  )
