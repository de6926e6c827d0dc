import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Option, Schedule, Schema } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import type { DatabaseFailure } from "../vectors/import-errors.js"

/**
 * Files the importer skipped after imports were interrupted inside them again and again
 * (`MAX_INTERRUPTED_ATTEMPTS`) are tried again by the daemon, not left until someone runs
 * `blctx index`: after a minute, then after twice as long each time it is skipped again, at most
 * every few hours, and at once when the file changed. The schedule lives in `import_retries`, so
 * a daemon restart keeps it; `index-status` lists what waits.
 */

/** The wait after the first skip. */
export const FIRST_RETRY = Duration.minutes(1)
/** The longest wait between two tries of the same unchanged file. */
export const MAX_RETRY = Duration.hours(4)
/** How often the daemon looks for files whose time came (or that changed). */
export const RETRY_CHECK_INTERVAL = Duration.seconds(30)
/** Files one pass looks at, the soonest due first. */
const RETRY_BATCH = 1000

/** The wait after the `skips`-th skip in a row: a minute, doubling each time, capped at `MAX_RETRY`. */
export const retryDelay = (skips: number): Duration.Duration =>
  Duration.millis(Math.min(Duration.toMillis(FIRST_RETRY) * 2 ** Math.max(0, skips - 1), Duration.toMillis(MAX_RETRY)))

/** A file waiting to be tried again, as `index-status` lists it. */
export const ImportRetryView = Schema.Struct({
  path: Schema.String,
  /** How many times in a row it was skipped. */
  attempts: Schema.Int,
  /** When the daemon tries it next (ISO 8601 UTC); sooner if the file changes. */
  next_retry_at: Schema.String,
  reason: Schema.String
})
export type ImportRetryView = typeof ImportRetryView.Type

/** Size, mtime and inode: what tells a changed file, as the importer's own "unchanged" test. */
interface Signature {
  readonly size: number
  readonly mtime_ms: number
  readonly ino: number
}

/** An `import_retries` row, as far as the schedule reads it. */
const RetryRow = Schema.Struct({
  path: Schema.String,
  size: Schema.NullOr(Schema.Number),
  mtime_ms: Schema.NullOr(Schema.Number),
  ino: Schema.NullOr(Schema.Number),
  attempts: Schema.Number,
  next_retry_at: Schema.String
})
type RetryRow = typeof RetryRow.Type

const RETRY_COLUMNS = "path, size, mtime_ms, ino, attempts, next_retry_at"

const retryOf = (sql: SqlClient.SqlClient) =>
  SqlSchema.findOne({
    Request: Schema.String,
    Result: RetryRow,
    execute: (path) => sql`SELECT ${sql.literal(RETRY_COLUMNS)} FROM import_retries WHERE path = ${path}`
  })

const soonestRetries = (sql: SqlClient.SqlClient) =>
  SqlSchema.findAll({
    Request: Schema.Number,
    Result: RetryRow,
    execute: (limit) =>
      sql`SELECT ${sql.literal(RETRY_COLUMNS)} FROM import_retries ORDER BY next_retry_at LIMIT ${limit}`
  })

const sameSignature = (row: RetryRow, s: Signature) =>
  row.size === s.size && row.mtime_ms === s.mtime_ms && row.ino === s.ino

const isoAt = (millis: number) => new Date(millis).toISOString()

/** The file's signature now, if it is there (a file that cannot be looked at counts as unchanged). */
const signatureOf = (path: string) =>
  Effect.flatMap(SafeFs, (fs) => fs.lstat(path)).pipe(
    Effect.map(Option.map((e): Signature => ({ size: e.size, mtime_ms: e.mtimeMs, ino: e.ino }))),
    Effect.either
  )

/**
 * Records that `path` was skipped, in the transaction that records the skip: one more skip in a
 * row of the same content (the first when the file changed since), next try after `retryDelay`.
 */
export const recordSkipped = (path: string, signature: Option.Option<Signature>, reason: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const previous = Option.getOrUndefined(yield* retryOf(sql)(path))
    const same = previous !== undefined && Option.isSome(signature) && sameSignature(previous, signature.value)
    const attempts = same ? previous.attempts + 1 : 1
    const s = Option.getOrNull(signature)
    const row = {
      path,
      size: s?.size ?? null,
      mtime_ms: s?.mtime_ms ?? null,
      ino: s?.ino ?? null,
      attempts,
      next_retry_at: isoAt(now + Duration.toMillis(retryDelay(attempts))),
      reason,
      skipped_at: isoAt(now)
    }
    yield* sql`INSERT INTO import_retries ${sql.insert(row)}
      ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, ino = excluded.ino,
        attempts = excluded.attempts, next_retry_at = excluded.next_retry_at, reason = excluded.reason,
        skipped_at = excluded.skipped_at`
  })

/** An import read `path` to its end: nothing waits for it any more. */
export const clearRetry = (path: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM import_retries WHERE path = ${path}`).pipe(Effect.asVoid)

/**
 * One look at the waiting files: a file gone is forgotten; a changed one starts its backoff over
 * and is due now; the rest are due when their time came. The due files are queued as one import
 * through `submit`, and each one's next try is set a backoff step ahead, so a queued import is
 * not queued again meanwhile (an import that reads it to the end clears it).
 */
export const retryDueImports = <E>(
  submit: (paths: ReadonlyArray<string>) => Effect.Effect<string, E>
): Effect.Effect<ReadonlyArray<string>, E | DatabaseFailure, SqlClient.SqlClient | SafeFs> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    const rows = yield* soonestRetries(sql)(RETRY_BATCH)
    const due: Array<{ readonly path: string; readonly attempts: number }> = []
    for (const row of rows) {
      const look = yield* signatureOf(row.path)
      if (look._tag === "Left") {
        if (Date.parse(row.next_retry_at) <= now) due.push(row)
        continue
      }
      if (Option.isNone(look.right)) {
        yield* sql`DELETE FROM import_retries WHERE path = ${row.path}`
        continue
      }
      const s = look.right.value
      if (!sameSignature(row, s)) {
        yield* sql`UPDATE import_retries SET size = ${s.size}, mtime_ms = ${s.mtime_ms}, ino = ${s.ino}, attempts = 0
          WHERE path = ${row.path}`
        due.push({ path: row.path, attempts: 0 })
      } else if (Date.parse(row.next_retry_at) <= now) due.push(row)
    }
    if (due.length === 0) return []
    const paths = due.map((d) => d.path)
    const jobId = yield* submit(paths)
    yield* Effect.logInfo("skipped imports queued again").pipe(Effect.annotateLogs({ job: jobId, files: paths.length }))
    for (const d of due) {
      const next = isoAt(now + Duration.toMillis(retryDelay(Math.max(1, d.attempts))))
      yield* sql`UPDATE import_retries SET next_retry_at = ${next} WHERE path = ${d.path}`
    }
    return paths
  })

/** `retryDueImports` every `RETRY_CHECK_INTERVAL` for as long as it runs; a failed pass is logged and retried. */
export const keepRetryingSkippedImports = <E>(
  submit: (paths: ReadonlyArray<string>) => Effect.Effect<string, E>
): Effect.Effect<never, never, SqlClient.SqlClient | SafeFs> =>
  retryDueImports(submit).pipe(
    Effect.catchAll((e) =>
      Effect.logWarning("retrying skipped imports failed").pipe(Effect.annotateLogs({ reason: String(e) }))
    ),
    Effect.repeat(Schedule.spaced(RETRY_CHECK_INTERVAL)),
    Effect.zipRight(Effect.never)
  )

/** What waits, the soonest first (the first `limit`), and how many wait in all: for `index-status`. */
export const readImportRetries = (limit: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listed = yield* SqlSchema.findAll({
      Request: Schema.Number,
      Result: ImportRetryView,
      execute: (n) => sql`
        SELECT path, attempts, next_retry_at, reason FROM import_retries ORDER BY next_retry_at, path LIMIT ${n}`
    })(limit)
    const counted = yield* SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: () => sql`SELECT count(*) AS n FROM import_retries`
    })(undefined)
    return { listed, total: Option.match(counted, { onNone: () => 0, onSome: (row) => row.n }) }
  })
