import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { storeFailure } from "../vectors/import-errors.js"

/** A `source_files` row: a transcript's checkpoint. */
export interface SourceFileRow {
  readonly id: number
  readonly path: string
  readonly session_id: string | null
  readonly size: number
  readonly mtime_ms: number
  readonly ino: number
  readonly indexed_bytes: number
  readonly prefix_sha256: string
  readonly resume_byte: number
  readonly resume_line: number
  readonly resume_turn: number
  readonly state: "indexed" | "partial" | "conflict"
}

export interface StoredMessage {
  readonly id: number
  readonly byte_start: number
  readonly text_sha256: string
  readonly turn_number: number
  readonly turn_id: string | null
}

/** Reads fail with a `HistoryStoreError` saying what was being looked up. */

export const findSourceByPath = (path: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<SourceFileRow>`SELECT * FROM source_files WHERE path = ${path}`.pipe(Effect.map((rows) => rows[0]))
  ).pipe(Effect.mapError(storeFailure(`look up the stored state of ${path}`)))

export const findSourcesByInode = (ino: number, path: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<SourceFileRow>`SELECT * FROM source_files WHERE ino = ${ino} AND path <> ${path}`
  ).pipe(Effect.mapError(storeFailure(`look up the sources sharing the inode of ${path}`)))

export const findSourcesBySession = (sessionId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<SourceFileRow>`SELECT * FROM source_files WHERE session_id = ${sessionId}`
  ).pipe(Effect.mapError(storeFailure(`look up the sources of session ${sessionId}`)))

export const storedMessagesFrom = (sourceFileId: number, fromByte: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<StoredMessage>`SELECT id, byte_start, text_sha256, turn_number, turn_id FROM messages
                                WHERE source_file_id = ${sourceFileId} AND byte_start >= ${fromByte}`
  ).pipe(Effect.mapError(storeFailure(`read the stored messages of source ${sourceFileId}`)))
