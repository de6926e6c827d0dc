import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { ImportRetryView, readImportRetries } from "../importer/import-retry.js"
import { countOf, rowsOf } from "../sql/sql-rows.js"

export const CAPTURE_NOTE =
  "Querying never captures new activity by itself: sessions reach the index through `blctx index`, the history_index step, or the optional hooks."

/** How many changed, missing, partial or conflicting sources are listed by path (all are counted). */
const LISTED = 50

export class Coverage extends Schema.Class<Coverage>("Coverage")({
  files: Schema.Struct({ total: Schema.Int, indexed: Schema.Int, partial: Schema.Int, conflict: Schema.Int }),
  sessions: Schema.Int,
  messages: Schema.Int,
  chunks: Schema.Int,
  /** Chunks with a vector, by model fingerprint key. */
  vectors: Schema.Array(Schema.Struct({ fingerprint: Schema.String, chunks: Schema.Int })),
  vectors_pending: Schema.Int,
  unknown_timestamps: Schema.Int,
  redactions: Schema.Int,
  sources_changed: Schema.Int,
  sources_missing: Schema.Int,
  /** Sources that could not be looked at (a permission error): neither changed nor missing as far as blctx knows. */
  sources_unreadable: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  changed_sources: Schema.Array(
    Schema.Struct({ path: Schema.String, reason: Schema.Literal("changed", "missing", "unreadable") })
  ),
  partial_imports: Schema.Array(
    Schema.Struct({ path: Schema.String, unclassified: Schema.Int, parse_errors: Schema.Int })
  ),
  conflicts: Schema.Array(Schema.Struct({ path: Schema.String, note: Schema.NullOr(Schema.String) })),
  /**
   * Files skipped after imports kept being interrupted inside them, which the daemon tries again
   * (a minute after the first skip, doubling, at most every four hours; at once when one changes):
   * how many wait, and the soonest ones with their attempts, next try and reason.
   */
  import_retries_waiting: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  import_retries: Schema.optionalWith(Schema.Array(ImportRetryView), { default: () => [] }),
  capture: Schema.String
}) {}

const StateCount = Schema.Struct({ state: Schema.String, n: Schema.Number })
const SourceRow = Schema.Struct({
  path: Schema.String,
  size: Schema.Number,
  mtime_ms: Schema.Number,
  state: Schema.String
})
const stateCounts = rowsOf(StateCount)
const sourceRows = rowsOf(SourceRow)
const vectorCounts = rowsOf(Coverage.fields.vectors.value)
const partialRows = rowsOf(Coverage.fields.partial_imports.value)
const conflictRows = rowsOf(Coverage.fields.conflicts.value)

/** What the index holds and how it compares with the transcripts on disk now (metadata only). */
export const coverage = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const fs = yield* SafeFs
  const files = yield* stateCounts(sql`SELECT state, count(*) AS n FROM source_files GROUP BY state`)
  const byState = (s: string) => files.find((f) => f.state === s)?.n ?? 0
  const sources = yield* sourceRows(sql`
    SELECT path, size, mtime_ms, state FROM source_files WHERE state <> 'conflict' ORDER BY path`)
  const changed: Array<{ path: string; reason: "changed" | "missing" | "unreadable" }> = []
  let changedCount = 0
  let missingCount = 0
  let unreadableCount = 0
  for (const source of sources) {
    // Only a path that is not there is missing; one that cannot be looked at (EACCES) is unreadable.
    const entry = yield* Effect.either(fs.lstat(source.path))
    const reason =
      entry._tag === "Left"
        ? ("unreadable" as const)
        : Option.match(entry.right, {
            onNone: () => "missing" as const,
            onSome: (e) => (e.size !== source.size || e.mtimeMs !== source.mtime_ms ? ("changed" as const) : null)
          })
    if (reason === null) continue
    if (reason === "missing") missingCount++
    else if (reason === "unreadable") unreadableCount++
    else changedCount++
    if (changed.length < LISTED) changed.push({ path: source.path, reason })
  }
  const retries = yield* readImportRetries(LISTED)
  return new Coverage({
    files: {
      total: files.reduce((n, f) => n + f.n, 0),
      indexed: byState("indexed"),
      partial: byState("partial"),
      conflict: byState("conflict")
    },
    sessions: yield* countOf(sql`SELECT count(*) AS n FROM sessions`),
    messages: yield* countOf(sql`SELECT count(*) AS n FROM messages`),
    chunks: yield* countOf(sql`SELECT count(*) AS n FROM chunks`),
    vectors: yield* vectorCounts(sql`
      SELECT vector_fingerprint AS fingerprint, count(*) AS chunks FROM chunks
      WHERE vector_fingerprint IS NOT NULL GROUP BY vector_fingerprint ORDER BY vector_fingerprint`),
    vectors_pending: yield* countOf(sql`SELECT count(*) AS n FROM chunks WHERE vector_fingerprint IS NULL`),
    unknown_timestamps: yield* countOf(sql`SELECT count(*) AS n FROM messages WHERE julianday(timestamp) IS NULL`),
    redactions: yield* countOf(sql`SELECT sum(redactions) AS n FROM messages`),
    sources_changed: changedCount,
    sources_missing: missingCount,
    sources_unreadable: unreadableCount,
    changed_sources: changed,
    partial_imports: yield* partialRows(sql`
      SELECT path, unclassified, parse_errors FROM source_files WHERE state = 'partial' ORDER BY path LIMIT ${LISTED}`),
    conflicts: yield* conflictRows(sql`
      SELECT path, note FROM source_files WHERE state = 'conflict' ORDER BY path LIMIT ${LISTED}`),
    import_retries_waiting: retries.total,
    import_retries: retries.listed,
    capture: CAPTURE_NOTE
  })
})
