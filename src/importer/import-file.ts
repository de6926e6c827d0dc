import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Chunk, DateTime, Effect, Option, Stream } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { redactSession } from "../redaction/redact-metadata.js"
import { classifyTranscript } from "../transcripts/classify.js"
import { recordsOf } from "../transcripts/reader.js"
import { TranscriptFiles, type TranscriptHandle } from "../transcripts/transcript-files.js"
import type { ChunkId } from "../vectors/vector-index.js"
import {
  findSourceByPath,
  findSourcesByInode,
  findSourcesBySession,
  type SourceFileRow,
  storedMessagesFrom
} from "./history-rows.js"
import { ImportServices, type TextPiece } from "./import-services.js"
import { type MessageRow, messageRows, resumePoint } from "./message-rows.js"

export type FileStatus = "imported" | "appended" | "unchanged" | "missing" | "conflict" | "unreadable"

/** What importing one file did. Counts add up over a job. */
export interface FileReport {
  readonly path: string
  readonly status: FileStatus
  readonly note?: string
  /** Why an imported file is not wholly in the index (unreadable lines, records not understood). */
  readonly problem?: string
  readonly counts: Readonly<Record<string, number>>
}

/** The prepared import of one file: everything computed, nothing written yet. */
export interface PreparedFile {
  readonly report: FileReport
  /** The writes; the job runs them in one transaction together with its checkpoint. */
  readonly write: Effect.Effect<void, unknown, SqlClient.SqlClient>
}

const prepared = (file: PreparedFile): PreparedFile => file

const HASH_BLOCK = 1024 * 1024
const EMBED_BATCH = 32
/** Messages chunked per call, so progress is seen between calls on a file with very many messages. */
const CHUNK_BATCH = 256

export interface PrepareOptions {
  /** Run after every read, chunking batch and embedding batch: lets the job tell a stuck file from a slow one. */
  readonly progress?: Effect.Effect<void>
}

/** The same handle, reporting progress after every read. */
const reportingReads = (handle: TranscriptHandle, progress: Effect.Effect<void>): TranscriptHandle => ({
  ...handle,
  read: (position, length) => Effect.tap(handle.read(position, length), () => progress),
  readInto: (position, buffer) => Effect.tap(handle.readInto(position, buffer), () => progress)
})

const SHOWN_LINES = 5

/** What keeps a classified file from being wholly indexed, in a few words; undefined when nothing does. */
const problemOf = (classification: ReturnType<typeof classifyTranscript>): string | undefined => {
  const unreadable = classification.decisions.filter((d) => d.record_type === "parse_error")
  const parts: Array<string> = []
  if (unreadable.length > 0) {
    const shown = unreadable
      .slice(0, SHOWN_LINES)
      .map((d) => `${d.line} (${d.reason.replace(/^unreadable line: /, "")})`)
      .join(", ")
    const more = unreadable.length > SHOWN_LINES ? ` and ${unreadable.length - SHOWN_LINES} more` : ""
    parts.push(`unreadable lines: ${shown}${more}`)
  }
  const other = classification.totals.by_decision.unclassified - unreadable.length
  if (other > 0) parts.push(`${other} record${other === 1 ? "" : "s"} not interpreted`)
  return parts.length === 0 ? undefined : parts.join("; ")
}

/**
 * Hashes `[0, end)` in one pass, also returning the digest at `checkAt` (the stored prefix), so an
 * append is verified and the new prefix hash computed in a single read.
 */
const hashPrefix = (handle: TranscriptHandle, end: number, checkAt: number) =>
  Effect.gen(function* () {
    const hash = createHash("sha256")
    let atCheck: string | null = checkAt === 0 ? hash.copy().digest("hex") : null
    let position = 0
    while (position < end) {
      const stop = checkAt > position && checkAt < end ? checkAt : end
      const bytes = yield* handle.read(position, Math.min(HASH_BLOCK, stop - position))
      if (bytes.length === 0) break
      hash.update(bytes)
      position += bytes.length
      if (position === checkAt) atCheck = hash.copy().digest("hex")
    }
    return { digest: hash.digest("hex"), atCheck }
  })

const classifyFrom = (handle: TranscriptHandle, start: { readonly byte: number; readonly line: number }) =>
  Stream.runCollect(recordsOf(handle, { from: start })).pipe(
    Effect.map((records) => {
      const all = Chunk.toReadonlyArray(records)
      return { classification: classifyTranscript(all), bytesParsed: handle.size - start.byte }
    })
  )

const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

const unchangedReport = (path: string): FileReport => ({ path, status: "unchanged", counts: { files_unchanged: 1 } })

/**
 * Imports one transcript: skips it untouched when its metadata signature is unchanged; reuses a
 * verified prefix and reads only the tail for an append; otherwise reparses it and reconciles,
 * keeping unchanged messages (and their chunks and vectors).
 */
export const prepareFile = (path: string, options: PrepareOptions = {}) =>
  Effect.gen(function* () {
    const progress = options.progress ?? Effect.void
    const files = yield* TranscriptFiles
    const fs = yield* SafeFs
    const { chunking, embedding } = yield* ImportServices

    const opened = yield* Effect.either(files.open(path))
    if (opened._tag === "Left") {
      const missing = opened.left.code === "ENOENT"
      return prepared({
        report: {
          path,
          status: missing ? "missing" : "unreadable",
          note: opened.left.message,
          counts: missing ? { files_missing: 1 } : { files_unreadable: 1 }
        },
        write: Effect.void
      })
    }
    const handle = reportingReads(opened.right, progress)
    const stat = { size: handle.size, mtime_ms: handle.mtimeMs, ino: handle.ino }

    // A file renamed (e.g. moved to archived_sessions) keeps its inode: adopt its row.
    let stored = yield* findSourceByPath(path)
    let moved = false
    if (stored === undefined) {
      for (const candidate of yield* findSourcesByInode(stat.ino, path)) {
        if (!(yield* fs.exists(candidate.path))) {
          stored = candidate
          moved = true
          break
        }
      }
    }
    if (stored !== undefined && !moved && stored.state !== "conflict") {
      if (stored.size === stat.size && stored.mtime_ms === stat.mtime_ms && stored.ino === stat.ino) {
        return prepared({ report: unchangedReport(path), write: Effect.void })
      }
    }

    const checkAt = stored !== undefined && stat.size >= stored.indexed_bytes ? stored.indexed_bytes : -1
    const hashed = yield* hashPrefix(handle, stat.size, checkAt)
    const append = stored !== undefined && stored.state !== "conflict" && hashed.atCheck === stored.prefix_sha256
    if (stored !== undefined && moved && append && stored.size === stat.size) {
      // Moved and unchanged: only the source reference changes.
      const id = stored.id
      return prepared({
        report: { path, status: "unchanged", note: `moved from ${stored.path}`, counts: { files_moved: 1 } },
        write: Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.asVoid(sql`UPDATE source_files SET path = ${path}, mtime_ms = ${stat.mtime_ms} WHERE id = ${id}`)
        )
      })
    }
    const start =
      append && stored !== undefined
        ? { byte: stored.resume_byte, line: stored.resume_line, turn: stored.resume_turn }
        : { byte: 0, line: 1, turn: 0 }
    const { classification, bytesParsed } = yield* classifyFrom(handle, start)
    yield* progress

    // The session's metadata is stored (and shown: the cwd is every result's project) redacted.
    const redactedSession = redactSession(classification.session)
    // Two different files claiming one session: report a conflict, import neither twice.
    const sessionId = redactedSession.session?.id ?? stored?.session_id ?? null
    if (sessionId !== null) {
      for (const other of yield* findSourcesBySession(sessionId)) {
        if (other.id === stored?.id || other.state === "conflict") continue
        if (yield* fs.exists(other.path)) {
          return yield* conflict(path, stat, other, sessionId, hashed.digest)
        }
        if (stored === undefined) {
          stored = other
          moved = true
        }
      }
    }

    const { rows, redactions, metadataRedactions } = messageRows(classification, start.turn)
    const metadataRedacted = metadataRedactions + redactedSession.redactions
    const existing = stored === undefined ? [] : yield* storedMessagesFrom(stored.id, start.byte)
    // Reconcile: the same text at the same place is kept as is; the same text that moved (the
    // file was rewritten) keeps its row, chunks and vectors with new positions; the rest changes.
    const existingByStart = new Map(existing.map((m) => [m.byte_start, m]))
    const keep = new Set<number>()
    const relocate: Array<{ readonly id: number; readonly row: MessageRow }> = []
    const unmatched: Array<MessageRow> = []
    for (const row of rows) {
      const old = existingByStart.get(row.byte_start)
      if (old !== undefined && old.text_sha256 === row.text_sha256) {
        keep.add(old.id)
        if (old.turn_number !== row.turn_number || old.turn_id !== row.turn_id) relocate.push({ id: old.id, row })
      } else unmatched.push(row)
    }
    const insert: Array<MessageRow> = []
    for (const row of unmatched) {
      const old = existing.find((m) => !keep.has(m.id) && m.text_sha256 === row.text_sha256)
      if (old === undefined) insert.push(row)
      else {
        keep.add(old.id)
        relocate.push({ id: old.id, row })
      }
    }
    const remove = existing.filter((m) => !keep.has(m.id)).map((m) => m.id)

    const pieces: ReadonlyArray<ReadonlyArray<TextPiece>> = (yield* Effect.forEach(
      Array.from({ length: Math.ceil(insert.length / CHUNK_BATCH) }, (_, i) =>
        insert.slice(i * CHUNK_BATCH, (i + 1) * CHUNK_BATCH).map((row) => row.text)
      ),
      (batch) => Effect.tap(chunking.chunkAll(batch), () => progress)
    )).flat()
    const chunkTexts = pieces.flat().map((p) => p.text)
    const vectors = yield* Option.match(embedding, {
      onNone: () => Effect.succeed(Option.none<ReadonlyArray<Float32Array>>()),
      onSome: (e) =>
        Effect.forEach(
          Array.from({ length: Math.ceil(chunkTexts.length / EMBED_BATCH) }, (_, i) =>
            chunkTexts.slice(i * EMBED_BATCH, (i + 1) * EMBED_BATCH)
          ),
          (batch) => Effect.tap(e.embed(batch), () => progress)
        ).pipe(Effect.map((batches) => Option.some(batches.flat())))
    })

    const resume = resumePoint(classification, start.turn) ?? start
    const unclassified = classification.totals.by_decision.unclassified
    const state = unclassified > 0 ? "partial" : "indexed"
    const session = redactedSession.session
    const problem = problemOf(classification)
    const report: FileReport = {
      path,
      status: append ? "appended" : "imported",
      ...(moved && stored !== undefined ? { note: `moved from ${stored.path}` } : {}),
      ...(problem === undefined ? {} : { problem }),
      counts: {
        [append ? "files_appended" : "files_imported"]: 1,
        ...(moved ? { files_moved: 1 } : {}),
        messages_added: insert.length,
        messages_removed: remove.length,
        messages_kept: keep.size,
        messages_relocated: relocate.length,
        chunks_added: chunkTexts.length,
        vectors_added: Option.isSome(vectors) ? chunkTexts.length : 0,
        vectors_pending: Option.isSome(vectors) ? 0 : chunkTexts.length,
        redactions,
        ...(metadataRedacted > 0 ? { metadata_redactions: metadataRedacted } : {}),
        records: classification.totals.records,
        unclassified,
        parse_errors: classification.totals.parse_errors,
        bytes_parsed: bytesParsed
      }
    }

    const storedId = stored?.id
    const write = Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const at = yield* nowIso
      const values = {
        path,
        session_id: sessionId,
        size: stat.size,
        mtime_ms: stat.mtime_ms,
        ino: stat.ino,
        indexed_bytes: stat.size,
        prefix_sha256: hashed.digest,
        resume_byte: resume.byte,
        resume_line: resume.line,
        resume_turn: resume.turn,
        records: classification.totals.records,
        unclassified,
        parse_errors: classification.totals.parse_errors,
        state,
        note: null,
        imported_at: at
      }
      let fileId = storedId
      if (storedId === undefined) {
        fileId = (yield* sql<{ id: number }>`INSERT INTO source_files ${sql.insert(values)} RETURNING id`)[0]?.id
      } else {
        yield* sql`UPDATE source_files SET ${sql.update(values)} WHERE id = ${storedId}`
      }
      if (fileId === undefined) return yield* Effect.dieMessage("source file row was not written")
      if (sessionId !== null) {
        yield* sql`INSERT INTO sessions (id, source_file_id, cwd, cli_version, started_at, forked_from_id, subagent)
                   VALUES (${sessionId}, ${fileId}, ${session?.cwd ?? null}, ${session?.cli_version ?? null},
                           ${session?.started_at ?? null}, ${session?.forked_from_id ?? null}, ${session?.subagent ?? null})
                   ON CONFLICT (id) DO UPDATE SET source_file_id = excluded.source_file_id,
                     cwd = coalesce(excluded.cwd, sessions.cwd), cli_version = coalesce(excluded.cli_version, sessions.cli_version),
                     started_at = coalesce(excluded.started_at, sessions.started_at),
                     forked_from_id = coalesce(excluded.forked_from_id, sessions.forked_from_id),
                     subagent = coalesce(excluded.subagent, sessions.subagent)`
      }
      const cwd =
        session?.cwd ??
        (yield* sql<{ cwd: string | null }>`SELECT cwd FROM sessions WHERE id = ${sessionId}`)[0]?.cwd ??
        null
      if (remove.length > 0) {
        yield* sql`DELETE FROM chunks WHERE message_id IN ${sql.in(remove)}`
        yield* sql`DELETE FROM messages WHERE id IN ${sql.in(remove)}`
      }
      yield* pruneRemovedVectors
      // Two passes: a kept row may move to a position another kept row still occupies.
      for (const { id } of relocate) yield* sql`UPDATE messages SET byte_start = ${-id} WHERE id = ${id}`
      for (const { id, row } of relocate) {
        yield* sql`UPDATE messages SET line = ${row.line}, byte_start = ${row.byte_start}, byte_end = ${row.byte_end},
                   turn_number = ${row.turn_number}, turn_id = ${row.turn_id}, timestamp = ${row.timestamp}
                   WHERE id = ${id}`
      }
      let vectorCursor = 0
      for (const [index, row] of insert.entries()) {
        const inserted = yield* sql<{ id: number }>`INSERT INTO messages ${sql.insert({
          source_file_id: fileId,
          session_id: sessionId,
          turn_number: row.turn_number,
          turn_id: row.turn_id,
          role: row.role,
          kind: row.kind,
          phase: row.phase,
          text: row.text,
          text_sha256: row.text_sha256,
          redactions: row.redactions,
          cwd,
          timestamp: row.timestamp,
          line: row.line,
          byte_start: row.byte_start,
          byte_end: row.byte_end
        })} RETURNING id`
        const messageId = inserted[0]?.id
        if (messageId === undefined) return yield* Effect.dieMessage("message row was not written")
        for (const [ordinal, piece] of (pieces[index] ?? []).entries()) {
          const fingerprint = Option.match(vectors, { onNone: () => null, onSome: () => embeddingKey })
          const chunk = yield* sql<{ id: number }>`INSERT INTO chunks ${sql.insert({
            message_id: messageId,
            ordinal,
            char_start: piece.start,
            char_end: piece.end,
            text: piece.text,
            tokenizer: chunking.tokenizer,
            vector_fingerprint: fingerprint
          })} RETURNING id`
          const chunkId = chunk[0]?.id
          if (chunkId === undefined) return yield* Effect.dieMessage("chunk row was not written")
          if (Option.isSome(vectors) && Option.isSome(embedding)) {
            const vector = vectors.value[vectorCursor]
            if (vector !== undefined) {
              yield* embedding.value.vectors.upsert(embedding.value.fingerprint, [{ id: chunkId as ChunkId, vector }])
            }
          }
          vectorCursor++
        }
      }
    })

    const embeddingKey = Option.match(embedding, { onNone: () => null, onSome: (e) => e.fingerprint.key })
    /** Removes vectors of deleted chunks in the same transaction (same connection for sqlite-vec). */
    const pruneRemovedVectors = Effect.gen(function* () {
      if (Option.isNone(embedding)) return
      const sql = yield* SqlClient.SqlClient
      const e = embedding.value
      const removed = yield* sql<{ chunk_id: number }>`SELECT chunk_id FROM removed_chunks
                                                      WHERE vector_fingerprint = ${e.fingerprint.key}`
      if (removed.length === 0) return
      const ids = removed.map((r) => r.chunk_id)
      yield* e.vectors.remove(e.fingerprint, ids as Array<ChunkId>)
      yield* sql`DELETE FROM removed_chunks WHERE chunk_id IN ${sql.in(ids)}`
    })

    return prepared({ report, write })
  })

const conflict = (
  path: string,
  stat: { readonly size: number; readonly mtime_ms: number; readonly ino: number },
  other: SourceFileRow,
  sessionId: string,
  digest: string
) =>
  Effect.succeed(
    prepared({
      report: {
        path,
        status: "conflict",
        note: `session ${sessionId} is already imported from ${other.path}`,
        counts: { files_conflict: 1 }
      },
      // Recorded so coverage can show it; no messages are stored for the second claimant.
      write: Effect.gen(function* () {
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
          note: `session ${sessionId} is already imported from ${other.path}`,
          imported_at: at
        }
        yield* sql`INSERT INTO source_files ${sql.insert(values)}
                 ON CONFLICT (path) DO UPDATE SET ${sql.update(values, ["path"])}`
      })
    })
  )
