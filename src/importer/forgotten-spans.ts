import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { storeFailure } from "../vectors/import-errors.js"

/** A byte range of a transcript whose messages were forgotten (`forgotten_spans`, migration 7). */
export const ByteSpan = Schema.Struct({ byte_start: Schema.Number, byte_end: Schema.Number })
export type ByteSpan = typeof ByteSpan.Type

/** The forgotten ranges of one source file, in file order (database errors as they come). */
export const readForgottenSpans = (sourceFileId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Number,
      Result: ByteSpan,
      execute: (id) =>
        sql`SELECT byte_start, byte_end FROM forgotten_spans WHERE source_file_id = ${id} ORDER BY byte_start`
    })(sourceFileId)
  )

/** The forgotten ranges of one source file, failing as the importer's store errors do. */
export const forgottenSpansOf = (sourceFileId: number) =>
  readForgottenSpans(sourceFileId).pipe(Effect.mapError(storeFailure("read the forgotten spans")))

/** Whether a message's bytes lie wholly inside one of the spans. */
export const insideAny = (spans: ReadonlyArray<ByteSpan>, row: ByteSpan): boolean =>
  spans.some((s) => s.byte_start <= row.byte_start && row.byte_end <= s.byte_end)
