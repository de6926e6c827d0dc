import { createHash } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { redactSession } from "../redaction/redact-metadata.js"
import type { TranscriptSummary } from "../transcripts/classification.js"
import { formatOfHandle } from "../transcripts/formats/registry.js"
import type { TranscriptFormat } from "../transcripts/formats/transcript-format.js"
import { TranscriptFileError, TranscriptFiles, type TranscriptHandle } from "../transcripts/transcript-files.js"
import { ChunkingFailed, EmbeddingFailed, type HistoryStoreError, storeFailure } from "../vectors/import-errors.js"
import { ImportServices, type TextPiece } from "../vectors/import-services.js"
import type { ChunkId, VectorPoint } from "../vectors/vector-index.js"
import { makePace } from "./event-loop-pace.js"
import { forgottenSpansOf, insideAny, readForgottenSpans } from "./forgotten-spans.js"
import {
  findSourceByPath,
  findSourcesByInode,
  findSourcesBySession,
  type SourceFileRow,
  type StoredMessage,
  storedMessagesFrom
} from "./history-rows.js"
import { forEachImportRecord } from "./import-records.js"
import { type MessageRow, messageRowBuilder, resumePoint } from "./message-rows.js"
import { verifyReadSnapshot } from "./read-snapshot.js"

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
  readonly write: Effect.Effect<void, HistoryStoreError, SqlClient.SqlClient>
}

const prepared = (file: PreparedFile): PreparedFile => file

/** A file skipped because it could not be read: nothing is written, the job goes on and ends `partial`. */
export const unreadableFile = (path: string, note: string): PreparedFile => ({
  report: { path, status: "unreadable", note, counts: { files_unreadable: 1 } },
  write: Effect.void
})

const HASH_BLOCK = 1024 * 1024
const EMBED_BATCH = 32
/** Vectors written to the index per call. */
const VECTOR_BATCH = 256
/** Messages chunked per call, so progress is seen between calls on a file with very many messages. */
const CHUNK_BATCH = 32
/**
 * Bytes per read of the classifying pass. Each read is a turn of the event loop, and the records
 * it completes are decoded and classified synchronously: a quarter of the shared reader's 1 MiB
 * keeps that to a few milliseconds, so the daemon's socket is never kept waiting for long.
 */
const READ_BYTES = 256 * 1024
/** Messages removed per statement: well within SQLite's limit on parameters, and paced. */
const REMOVE_BATCH = 64

/** What a file's import is doing: a stall while reading is the file's problem, later ones are not. */
export type PrepareStage = "reading" | "chunking" | "embedding"

export interface PrepareOptions {
  /** Run after every read, chunking batch and embedding batch: lets the job tell a stuck file from a slow one. */
  readonly progress?: Effect.Effect<void>
  /** Told when the work moves on to chunking, then to embedding (it starts `reading`). */
  readonly stage?: (stage: PrepareStage) => Effect.Effect<void>
}

const describeDefect = (defect: unknown): string => {
  if (defect instanceof Error) return defect.name === "Error" ? defect.message : `${defect.name}: ${defect.message}`
  return String(defect)
}

/** Why a file that cannot be read is skipped, in words. Only a file that does not exist is missing. */
const readProblem = (e: TranscriptFileError): string => {
  if (e.code === "EACCES" || e.code === "EPERM") {
    return `permission denied (${e.code}) on ${e.op}: ${e.remediation}`
  }
  return e.op === "open" ? e.message : `could not be read: ${e.message}`
}

/**
 * The same handle, reporting progress after every read. A read that returns nothing before the
 * size captured at open means the file was truncated or replaced while it was read: it fails like
 * any other read, so the file is skipped as unreadable rather than imported in part.
 */
const guardedReads = (handle: TranscriptHandle, progress: Effect.Effect<void>): TranscriptHandle => {
  const shrank = (position: number) =>
    new TranscriptFileError({
      op: "read",
      path: handle.path,
      code: "ESHRANK",
      message: `the file became shorter while it was read (at byte ${position} of ${handle.size}): truncated or replaced`,
      remediation: "Nothing of it was imported; the next import reads it again."
    })
  return {
    ...handle,
    read: (position, length) =>
      handle.read(position, length).pipe(
        Effect.filterOrFail(
          (bytes) => bytes.length > 0 || length === 0 || position >= handle.size,
          () => shrank(position)
        ),
        Effect.tap(() => progress)
      ),
    readInto: (position, buffer) =>
      handle.readInto(position, buffer).pipe(
        Effect.filterOrFail(
          (read) => read > 0 || buffer.length === 0 || position >= handle.size,
          () => shrank(position)
        ),
        Effect.tap(() => progress)
      )
  }
}

/**
 * The SHA-256 of a file's bytes in order, each byte read once whoever reads it: `upTo` reads what
 * has not been hashed yet, and `feeding` is the handle whose reads also feed the hash, so the
 * classifier's pass hashes what it reads instead of a second pass reading the file again.
 */
const makeFileHash = (handle: TranscriptHandle) => {
  const hash = createHash("sha256")
  let hashed = 0
  let scratch: Uint8Array | undefined
  const upTo = (end: number): Effect.Effect<void, TranscriptFileError> =>
    Effect.gen(function* () {
      while (hashed < end) {
        scratch ??= new Uint8Array(HASH_BLOCK)
        const want = Math.min(HASH_BLOCK, end - hashed)
        const read = yield* handle.readInto(hashed, want === HASH_BLOCK ? scratch : scratch.subarray(0, want))
        if (read === 0) return // past the end: the guarded handle has already failed a short file
        hash.update(scratch.subarray(0, read))
        hashed += read
      }
    })
  const feeding: TranscriptHandle = {
    ...handle,
    readInto: (position, buffer) =>
      Effect.gen(function* () {
        if (position > hashed) yield* upTo(position)
        const read = yield* handle.readInto(position, buffer)
        if (position + read > hashed) {
          hash.update(buffer.subarray(hashed - position, read))
          hashed = position + read
        }
        return read
      })
  }
  return { upTo, feeding, digestNow: () => hash.copy().digest("hex"), digest: () => hash.digest("hex") }
}

/** The SHA-256 of the file's bytes `[0, size)`, read again. */
const digestOf = (handle: TranscriptHandle, size: number) =>
  Effect.suspend(() => {
    const again = makeFileHash(handle)
    return Effect.map(again.upTo(size), () => again.digest())
  })

/** What keeps a classified file from being wholly indexed, in a few words; undefined when nothing does. */
const problemOf = (summary: TranscriptSummary): string | undefined => {
  const unreadable = summary.totals.parse_errors
  const parts: Array<string> = []
  if (unreadable > 0) {
    const shown = summary.unreadable_lines.map((u) => `${u.line} (${u.reason})`).join(", ")
    const rest = unreadable - summary.unreadable_lines.length
    parts.push(`unreadable lines: ${shown}${rest > 0 ? ` and ${rest} more` : ""}`)
  }
  const other = summary.totals.by_decision.unclassified - unreadable
  if (other > 0) parts.push(`${other} record${other === 1 ? "" : "s"} not interpreted`)
  return parts.length === 0 ? undefined : parts.join("; ")
}

interface Start {
  readonly byte: number
  readonly line: number
  readonly turn: number
}

/**
 * The one streaming pass over the file: reads from `start`, classifies each record as it is read
 * (the lean classifier keeps no decision per record; tool output is not even decoded, see
 * `import-records.ts`), hashes what it reads, and reduces the result to what is stored: redacted
 * rows and a few figures. Nothing else of the file outlives this pass.
 */
const readAndClassify = (file: ReturnType<typeof makeFileHash>, size: number, start: Start, format: TranscriptFormat) =>
  Effect.gen(function* () {
    const classifier = format.summarizer()
    yield* forEachImportRecord(
      file.feeding,
      {
        from: start,
        chunkBytes: READ_BYTES,
        ...(format.decidedByType === undefined ? {} : { decidedByType: format.decidedByType })
      },
      classifier.push
    )
    yield* file.upTo(size)
    const summary = classifier.finish()
    // Redacting every message is the longest synchronous stretch of a file's preparation: paced.
    const pace = makePace()
    const builder = messageRowBuilder(start.turn)
    for (const turn of summary.turns) yield* pace(builder.add(turn))
    const { rows, redactions, metadataRedactions } = builder.finish()
    const session = redactSession(summary.session)
    const problem = problemOf(summary)
    return {
      digest: file.digest(),
      rows,
      redactions,
      metadataRedactions: metadataRedactions + session.redactions,
      session: session.session,
      resume: resumePoint(summary, start.turn) ?? start,
      records: summary.totals.records,
      unclassified: summary.totals.by_decision.unclassified,
      parseErrors: summary.totals.parse_errors,
      ...(problem === undefined ? {} : { problem }),
      bytesParsed: size - start.byte
    }
  })

/**
 * Whether `path` is still there. Only a path that does not exist is absent: one that cannot be
 * looked at (EACCES on a parent) may well exist, so its row is never taken over or ignored.
 */
const stillThere = (path: string) =>
  Effect.flatMap(SafeFs, (fs) =>
    fs.lstat(path).pipe(
      Effect.map(Option.isSome),
      Effect.orElseSucceed(() => true)
    )
  )

const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

const unchangedReport = (path: string): FileReport => ({ path, status: "unchanged", counts: { files_unchanged: 1 } })

/** Rows from the stored ones, by text hash, so a rewritten file's reconciliation is linear. */
const byText = (existing: ReadonlyArray<StoredMessage>) => {
  const map = new Map<string, Array<StoredMessage>>()
  for (const m of existing) {
    const list = map.get(m.text_sha256) ?? []
    list.push(m)
    map.set(m.text_sha256, list)
  }
  return map
}

/**
 * Imports one transcript: skips it untouched when its metadata signature is unchanged; reuses a
 * verified prefix and reads only the tail for an append; otherwise reparses it and reconciles,
 * keeping unchanged messages (and their chunks and vectors).
 *
 * The file is read in one streaming pass, classified as it is read, so memory grows with the
 * messages it proposes for the index, not with the file. A file that cannot be read (not found,
 * refused, not a regular file, failing while read, or truncated, rewritten, replaced or moved
 * while read: `read-snapshot.ts`) is a report, never an error:
 * `missing` (ENOENT only) or `unreadable` with the reason. The errors are the ones that are not
 * the file's fault: the tokenizer (`ChunkingFailed`), the model (`EmbeddingFailed`) and the
 * database (`HistoryStoreError`); the job fails on them without moving past this file.
 */
export const prepareFile = (path: string, options: PrepareOptions = {}) =>
  Effect.gen(function* () {
    const progress = options.progress ?? Effect.void
    const stage = options.stage ?? (() => Effect.void)
    const files = yield* TranscriptFiles
    const { chunking, embedding } = yield* ImportServices

    const opened = yield* Effect.either(files.open(path))
    if (opened._tag === "Left") {
      const error = opened.left
      if (error.code === "ENOENT") {
        return prepared({
          report: { path, status: "missing", note: error.message, counts: { files_missing: 1 } },
          write: Effect.void
        })
      }
      return unreadableFile(path, readProblem(error))
    }
    const handle = guardedReads(opened.right, progress)
    const stat = { size: handle.size, mtime_ms: handle.mtimeMs, ino: handle.ino }
    // Which agent wrote it, from its name and first bytes: a file no format claims is not read.
    const recognised = yield* Effect.either(formatOfHandle(handle))
    if (recognised._tag === "Left") {
      const e = recognised.left
      return unreadableFile(path, e._tag === "UnknownTranscriptFormat" ? e.message : readProblem(e))
    }
    const format = recognised.right

    // A file renamed (e.g. moved to archived_sessions) keeps its inode: adopt its row.
    let stored = yield* findSourceByPath(path)
    let moved = false
    if (stored === undefined) {
      for (const candidate of yield* findSourcesByInode(stat.ino, path)) {
        if (!(yield* stillThere(candidate.path))) {
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

    // Reading: the stored prefix is hashed first (an append is verified before choosing where to
    // start), then one pass classifies from the start point and hashes the rest of the file.
    // Whatever goes wrong reading it, or a defect on its content, makes the file unreadable.
    const file = makeFileHash(handle)
    const outcome = yield* Effect.gen(function* () {
      const checkAt = stored !== undefined && stat.size >= stored.indexed_bytes ? stored.indexed_bytes : -1
      let atCheck: string | null = null
      if (checkAt >= 0) {
        yield* file.upTo(checkAt)
        atCheck = file.digestNow()
      }
      const append = stored !== undefined && stored.state !== "conflict" && atCheck === stored.prefix_sha256
      if (stored !== undefined && moved && append && stored.size === stat.size) {
        return { _tag: "MovedUnchanged", from: stored } as const
      }
      const start: Start =
        append && stored !== undefined
          ? { byte: stored.resume_byte, line: stored.resume_line, turn: stored.resume_turn }
          : { byte: 0, line: 1, turn: 0 }
      const content = yield* readAndClassify(file, stat.size, start, format)
      // Reads see a file as it is at each read, so bytes read across a rewrite mix two versions:
      // only a read proven to be one version of the file is stored.
      yield* verifyReadSnapshot(
        { path, size: stat.size, mtimeMs: stat.mtime_ms, ino: stat.ino, digest: content.digest },
        digestOf(handle, stat.size)
      )
      return { _tag: "Read", append, start, content } as const
    }).pipe(
      Effect.catchTag("TranscriptFileError", (e) =>
        Effect.succeed({ _tag: "Unreadable", note: readProblem(e) } as const)
      ),
      Effect.catchTag("FileChangedWhileRead", (e) => Effect.succeed({ _tag: "Unreadable", note: e.message } as const)),
      Effect.catchAllDefect((defect) =>
        Effect.succeed({ _tag: "Unreadable", note: `could not be imported: ${describeDefect(defect)}` } as const)
      )
    )
    if (outcome._tag === "Unreadable") return unreadableFile(path, outcome.note)
    if (outcome._tag === "MovedUnchanged") {
      // Moved and unchanged: only the source reference changes.
      const from = outcome.from
      return prepared({
        report: { path, status: "unchanged", note: `moved from ${from.path}`, counts: { files_moved: 1 } },
        write: Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.asVoid(sql`UPDATE source_files SET path = ${path}, mtime_ms = ${stat.mtime_ms} WHERE id = ${from.id}`)
        ).pipe(Effect.mapError(storeFailure(`record that ${from.path} moved to ${path}`)))
      })
    }
    const { append, start, content } = outcome
    yield* progress

    // Two different files claiming one session: report a conflict, import neither twice.
    const sessionId = content.session?.id ?? stored?.session_id ?? null
    if (sessionId !== null) {
      for (const other of yield* findSourcesBySession(sessionId)) {
        if (other.id === stored?.id || other.state === "conflict") continue
        if (yield* stillThere(other.path)) {
          return conflict(path, stat, other, sessionId, content.digest)
        }
        if (stored === undefined) {
          stored = other
          moved = true
        }
      }
    }

    // Messages inside a byte range a person made blctx forget are never stored again: not on a
    // re-import, not when an append re-reads the last stored turn, not after a rewrite or a move.
    const forgotten = stored === undefined ? [] : yield* forgottenSpansOf(stored.id)
    const rows = forgotten.length === 0 ? content.rows : content.rows.filter((row) => !insideAny(forgotten, row))
    const forgottenCount = content.rows.length - rows.length
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
    const existingByText = byText(existing)
    const insert: Array<MessageRow> = []
    for (const row of unmatched) {
      const old = existingByText.get(row.text_sha256)?.find((m) => !keep.has(m.id))
      if (old === undefined) insert.push(row)
      else {
        keep.add(old.id)
        relocate.push({ id: old.id, row })
      }
    }
    const remove = existing.filter((m) => !keep.has(m.id)).map((m) => m.id)

    yield* stage("chunking")
    const pieces: Array<ReadonlyArray<TextPiece>> = []
    for (let i = 0; i < insert.length; i += CHUNK_BATCH) {
      const batch = insert.slice(i, i + CHUNK_BATCH).map((row) => row.text)
      const chunked = yield* chunking
        .chunkAll(batch)
        .pipe(Effect.mapError((e) => ChunkingFailed.of(chunking.tokenizer, path, e)))
      for (let j = 0; j < batch.length; j++) pieces.push(chunked[j] ?? [])
      yield* progress
    }
    const chunkCount = pieces.reduce((n, p) => n + p.length, 0)

    const vectors: Option.Option<Array<Float32Array>> = yield* Option.match(embedding, {
      onNone: () => Effect.succeed(Option.none<Array<Float32Array>>()),
      onSome: (model) =>
        Effect.gen(function* () {
          yield* stage("embedding")
          const out: Array<Float32Array> = []
          let batch: Array<string> = []
          const flush = Effect.suspend(() => {
            const texts = batch
            batch = []
            return model.embed(texts).pipe(
              Effect.mapError((e) => EmbeddingFailed.of(model.fingerprint.label, path, e)),
              Effect.tap((embedded) => {
                for (const v of embedded) out.push(v)
              }),
              Effect.zipRight(progress)
            )
          })
          for (const list of pieces) {
            for (const piece of list) {
              batch.push(piece.text)
              if (batch.length === EMBED_BATCH) yield* flush
            }
          }
          if (batch.length > 0) yield* flush
          return Option.some(out)
        })
    })

    const unclassified = content.unclassified
    const state = unclassified > 0 ? "partial" : "indexed"
    const session = content.session
    const report: FileReport = {
      path,
      status: append ? "appended" : "imported",
      ...(moved && stored !== undefined ? { note: `moved from ${stored.path}` } : {}),
      ...(content.problem === undefined ? {} : { problem: content.problem }),
      counts: {
        [append ? "files_appended" : "files_imported"]: 1,
        ...(moved ? { files_moved: 1 } : {}),
        messages_added: insert.length,
        messages_removed: remove.length,
        messages_kept: keep.size,
        messages_relocated: relocate.length,
        ...(forgottenCount > 0 ? { messages_forgotten: forgottenCount } : {}),
        chunks_added: chunkCount,
        vectors_added: Option.isSome(vectors) ? chunkCount : 0,
        vectors_pending: Option.isSome(vectors) ? 0 : chunkCount,
        redactions: content.redactions,
        ...(content.metadataRedactions > 0 ? { metadata_redactions: content.metadataRedactions } : {}),
        records: content.records,
        unclassified,
        parse_errors: content.parseErrors,
        bytes_parsed: content.bytesParsed
      }
    }

    const storedId = stored?.id
    const resume = content.resume
    const embeddingKey = Option.match(embedding, { onNone: () => null, onSome: (e) => e.fingerprint.key })

    /** Removes vectors of deleted chunks in the same transaction (same connection for the vector tables). */
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

    // The rows are written in one transaction, yielding to the event loop as they go (`makePace`):
    // the transaction stays open meanwhile, and the connection's other users (notes, capture)
    // wait for its end as before, since the SQLite client lets one transaction at a time use it.
    const write = Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const at = yield* nowIso
      const pace = makePace()
      const values = {
        path,
        session_id: sessionId,
        size: stat.size,
        mtime_ms: stat.mtime_ms,
        ino: stat.ino,
        indexed_bytes: stat.size,
        prefix_sha256: content.digest,
        resume_byte: resume.byte,
        resume_line: resume.line,
        resume_turn: resume.turn,
        records: content.records,
        unclassified,
        parse_errors: content.parseErrors,
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
      for (let i = 0; i < remove.length; i += REMOVE_BATCH) {
        const ids = remove.slice(i, i + REMOVE_BATCH)
        yield* sql`DELETE FROM chunks WHERE message_id IN ${sql.in(ids)}`
        yield* sql`DELETE FROM messages WHERE id IN ${sql.in(ids)}`
        yield* pace(0, ids.length)
      }
      yield* pruneRemovedVectors
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
      let vectorCursor = 0
      // Vectors go to the index in batches, in the same transaction as their chunks' rows.
      let points: Array<VectorPoint> = []
      const flushPoints = Effect.suspend(() => {
        const batch = points
        points = []
        return batch.length === 0 || Option.isNone(embedding)
          ? Effect.void
          : embedding.value.vectors.upsert(embedding.value.fingerprint, batch)
      })
      // A forget may have committed since the file was read: its spans are read again here, in
      // the write's transaction, so a message it removed is not stored again by this import. A
      // file new to the index has none.
      const forgottenNow = storedId === undefined ? [] : yield* readForgottenSpans(fileId)
      for (const [index, row] of insert.entries()) {
        if (forgottenNow.length > 0 && insideAny(forgottenNow, row)) {
          vectorCursor += (pieces[index] ?? []).length
          continue
        }
        // Columns by name, never by position: columns added later keep their defaults.
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
          byte_end: row.byte_end,
          source_type: format.sourceType,
          agent: format.agent
        })} RETURNING id`
        const messageId = inserted[0]?.id
        if (messageId === undefined) return yield* Effect.dieMessage("message row was not written")
        for (const [ordinal, piece] of (pieces[index] ?? []).entries()) {
          const chunk = yield* sql<{ id: number }>`INSERT INTO chunks ${sql.insert({
            message_id: messageId,
            ordinal,
            char_start: piece.start,
            char_end: piece.end,
            text: piece.text,
            tokenizer: chunking.tokenizer,
            vector_fingerprint: Option.isSome(vectors) ? embeddingKey : null
          })} RETURNING id`
          const chunkId = chunk[0]?.id
          if (chunkId === undefined) return yield* Effect.dieMessage("chunk row was not written")
          const vector = Option.isSome(vectors) ? vectors.value[vectorCursor] : undefined
          if (vector !== undefined) {
            points.push({ id: chunkId as ChunkId, vector })
            if (points.length >= VECTOR_BATCH) yield* flushPoints
          }
          vectorCursor++
        }
        yield* pace(row.text.length)
      }
      yield* flushPoints
    }).pipe(Effect.mapError(storeFailure(`store the rows of ${path}`)))

    return prepared({ report, write })
  })

const conflict = (
  path: string,
  stat: { readonly size: number; readonly mtime_ms: number; readonly ino: number },
  other: SourceFileRow,
  sessionId: string,
  digest: string
): PreparedFile =>
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
    }).pipe(Effect.mapError(storeFailure(`record the conflict of ${path}`)))
  })
