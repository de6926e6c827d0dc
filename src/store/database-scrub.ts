import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schedule, Schema } from "effect"
import { firstRowOf } from "../sql/sql-rows.js"
import { StoreError } from "./store-error.js"

/** A row of `PRAGMA wal_checkpoint`: `busy` is 1 when readers kept it from finishing. */
const checkpointRow = firstRowOf(Schema.Struct({ busy: Schema.Number }))

export interface DatabaseScrubOptions {
  /** The daemon's writer connection, outside any transaction (VACUUM cannot run inside one). */
  readonly sql: SqlClient.SqlClient
  /** The database file, named in every StoreError. */
  readonly database: string
}

/**
 * Rewrites the database so text removed or replaced in its rows is nowhere else in the file or
 * its WAL: after a forget, and after stored text was redacted again under newer rules.
 */
export const makeDatabaseScrub = ({ sql, database }: DatabaseScrubOptions) => {
  /**
   * A truncating checkpoint copies the WAL into the file and empties it. It needs the query
   * workers' reads to end: it is tried again for 5 seconds while they hold it.
   */
  const checkpoint = checkpointRow(sql`PRAGMA wal_checkpoint(TRUNCATE)`).pipe(
    Effect.flatMap((row) =>
      Option.match(row, { onNone: () => 0, onSome: (r) => r.busy }) === 0
        ? Effect.void
        : Effect.fail({ _tag: "CheckpointBusy" as const })
    ),
    Effect.retry({
      schedule: Schedule.spaced("100 millis"),
      times: 50,
      while: (e) => "_tag" in e && e._tag === "CheckpointBusy"
    }),
    Effect.catchTag("CheckpointBusy", () =>
      Effect.fail(
        new StoreError({
          path: database,
          message: "the WAL checkpoint stayed busy (readers held it for 5 seconds); it is tried again shortly"
        })
      )
    )
  )

  /**
   * The FTS index rebuilt from the chunks, `VACUUM`, then a truncating checkpoint. Secure-delete
   * removes a term's entries from FTS5's leaf pages, but the segment b-tree (`chunks_fts_idx`)
   * keeps leaf separator keys, which are term prefixes, and 'optimize' is a no-op on an index that
   * is one segment already: the rebuild leaves no key of a removed term. `VACUUM` rewrites the
   * file so no free page keeps old content (the writer also runs with `secure_delete`, which
   * zeroes freed content as it goes); the checkpoint moves the rewritten pages out of the WAL.
   */
  const compact = Effect.gen(function* () {
    yield* sql`INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')`
    yield* sql`VACUUM`
    yield* checkpoint
  })

  return { compact, checkpoint } as const
}
