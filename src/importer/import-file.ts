import type { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { formatOfHandle } from "../transcripts/formats/registry.js"
import type { TranscriptFormat } from "../transcripts/formats/transcript-format.js"
import { TranscriptFiles, type TranscriptHandle } from "../transcripts/transcript-files.js"
import { ChunkingFailed, EmbeddingFailed, type HistoryStoreError } from "../vectors/import-errors.js"
import {
  type ImportChunking,
  type ImportEmbedding,
  ImportServices,
  type TextPiece
} from "../vectors/import-services.js"
import { forgottenSpansOf, insideAny } from "./forgotten-spans.js"
import {
  findSourceByPath,
  findSourcesByInode,
  findSourcesBySession,
  type SourceFileRow,
  storedMessagesFrom
} from "./history-rows.js"
import { type FileStat, recordConflict, recordMove, writeImport } from "./import-writes.js"
import type { MessageRow } from "./message-rows.js"
import { verifyReadSnapshot } from "./read-snapshot.js"
import { type Reconciliation, reconcile } from "./reconcile.js"
import {
  describeDefect,
  digestOf,
  type FileHash,
  guardedReads,
  makeFileHash,
  readAndClassify,
  readProblem,
  type Start
} from "./transcript-reading.js"

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

const EMBED_BATCH = 32
/** Messages chunked per call, so progress is seen between calls on a file with very many messages. */
const CHUNK_BATCH = 32

/** What a file's import is doing: a stall while reading is the file's problem, later ones are not. */
export type PrepareStage = "reading" | "chunking" | "embedding"

export interface PrepareOptions {
  /** Run after every read, chunking batch and embedding batch: lets the job tell a stuck file from a slow one. */
  readonly progress?: Effect.Effect<void>
  /** Told when the work moves on to chunking, then to embedding (it starts `reading`). */
  readonly stage?: (stage: PrepareStage) => Effect.Effect<void>
}

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

const unchangedReport = (path: string): FileReport => ({ path, status: "unchanged", counts: { files_unchanged: 1 } })

/** An opened transcript and the format that claims it, or the report of a file that is not read. */
type Opened =
  | { readonly _tag: "Opened"; readonly handle: TranscriptHandle; readonly format: TranscriptFormat }
  | { readonly _tag: "Skipped"; readonly file: PreparedFile }

/**
 * Opens the file, its reads reporting progress, and asks which agent wrote it, from its name and
 * first bytes: a file no format claims is not read.
 */
const openTranscript = (path: string, progress: Effect.Effect<void>) =>
  Effect.gen(function* () {
    const files = yield* TranscriptFiles
    const opened = yield* Effect.either(files.open(path))
    if (opened._tag === "Left") {
      const error = opened.left
      if (error.code !== "ENOENT") return skipped(unreadableFile(path, readProblem(error)))
      const report: FileReport = { path, status: "missing", note: error.message, counts: { files_missing: 1 } }
      return skipped({ report, write: Effect.void })
    }
    const handle = guardedReads(opened.right, progress)
    const recognised = yield* Effect.either(formatOfHandle(handle))
    if (recognised._tag === "Right") return { _tag: "Opened", handle, format: recognised.right } as Opened
    const e = recognised.left
    return skipped(unreadableFile(path, e._tag === "UnknownTranscriptFormat" ? e.message : readProblem(e)))
  })

const skipped = (file: PreparedFile): Opened => ({ _tag: "Skipped", file })

const statOf = (handle: TranscriptHandle): FileStat => ({
  size: handle.size,
  mtime_ms: handle.mtimeMs,
  ino: handle.ino
})

/** The stored row a file continues, if any; `moved` when it was found under another path. */
interface Known {
  readonly stored: SourceFileRow | undefined
  readonly moved: boolean
}

/** The file's row by its path, else the row of a file renamed (e.g. moved to archived_sessions): it keeps its inode. */
const findKnown = (path: string, stat: FileStat) =>
  Effect.gen(function* () {
    const stored = yield* findSourceByPath(path)
    if (stored !== undefined) return { stored, moved: false } satisfies Known
    for (const candidate of yield* findSourcesByInode(stat.ino, path)) {
      if (!(yield* stillThere(candidate.path))) return { stored: candidate, moved: true } satisfies Known
    }
    return { stored: undefined, moved: false } satisfies Known
  })

/** Same path, same signature, no conflict: nothing to read. */
const isUnchanged = ({ stored, moved }: Known, stat: FileStat) =>
  stored !== undefined &&
  !moved &&
  stored.state !== "conflict" &&
  stored.size === stat.size &&
  stored.mtime_ms === stat.mtime_ms &&
  stored.ino === stat.ino

/** Where reading starts: after the stored prefix when the file only grew (an append), else from the top. */
type Plan =
  | { readonly _tag: "MovedUnchanged"; readonly from: SourceFileRow }
  | { readonly _tag: "Start"; readonly append: boolean; readonly start: Start }

/** Hashes the stored prefix first, so an append is verified before choosing where to start. */
const planRead = (file: FileHash, { stored, moved }: Known, stat: FileStat) =>
  Effect.gen(function* () {
    const checkAt = stored !== undefined && stat.size >= stored.indexed_bytes ? stored.indexed_bytes : -1
    let atCheck: string | null = null
    if (checkAt >= 0) {
      yield* file.upTo(checkAt)
      atCheck = file.digestNow()
    }
    const append = stored !== undefined && stored.state !== "conflict" && atCheck === stored.prefix_sha256
    if (stored !== undefined && moved && append && stored.size === stat.size) {
      return { _tag: "MovedUnchanged", from: stored } as Plan
    }
    const start: Start =
      append && stored !== undefined
        ? { byte: stored.resume_byte, line: stored.resume_line, turn: stored.resume_turn }
        : { byte: 0, line: 1, turn: 0 }
    return { _tag: "Start", append, start } as Plan
  })

/**
 * Reads the file: one pass classifies from the start point and hashes the rest of it. Whatever
 * goes wrong reading it, or a defect on its content, makes the file unreadable.
 */
const readFile = (path: string, handle: TranscriptHandle, format: TranscriptFormat, known: Known, stat: FileStat) =>
  Effect.gen(function* () {
    const file = makeFileHash(handle)
    const plan = yield* planRead(file, known, stat)
    if (plan._tag === "MovedUnchanged") return plan
    const content = yield* readAndClassify(file, stat.size, plan.start, format)
    // Reads see a file as it is at each read, so bytes read across a rewrite mix two versions:
    // only a read proven to be one version of the file is stored.
    yield* verifyReadSnapshot(
      { path, size: stat.size, mtimeMs: stat.mtime_ms, ino: stat.ino, digest: content.digest },
      digestOf(handle, stat.size)
    )
    return { _tag: "Read", append: plan.append, start: plan.start, content } as const
  }).pipe(
    Effect.catchTag("TranscriptFileError", (e) =>
      Effect.succeed({ _tag: "Unreadable", note: readProblem(e) } as const)
    ),
    Effect.catchTag("FileChangedWhileRead", (e) => Effect.succeed({ _tag: "Unreadable", note: e.message } as const)),
    Effect.catchAllDefect((defect) =>
      Effect.succeed({ _tag: "Unreadable", note: `could not be imported: ${describeDefect(defect)}` } as const)
    )
  )

/** Moved and unchanged: only the source reference changes. */
const movedUnchanged = (path: string, stat: FileStat, from: SourceFileRow): PreparedFile => ({
  report: { path, status: "unchanged", note: `moved from ${from.path}`, counts: { files_moved: 1 } },
  write: recordMove(path, stat, from)
})

/** Two different files claiming one session: a conflict, or a stored file of it that is gone, taken over. */
type Claim =
  | { readonly _tag: "Claimed"; readonly known: Known }
  | { readonly _tag: "Conflict"; readonly other: SourceFileRow }

/** Whether another file, still there, already holds the session's messages. */
const claimSession = (sessionId: string | null, known: Known) =>
  Effect.gen(function* () {
    if (sessionId === null) return { _tag: "Claimed", known } as Claim
    let { stored, moved } = known
    for (const other of yield* findSourcesBySession(sessionId)) {
      if (other.id === stored?.id || other.state === "conflict") continue
      if (yield* stillThere(other.path)) return { _tag: "Conflict", other } as Claim
      if (stored === undefined) {
        stored = other
        moved = true
      }
    }
    return { _tag: "Claimed", known: { stored, moved } } as Claim
  })

const conflict = (
  path: string,
  stat: FileStat,
  other: SourceFileRow,
  sessionId: string,
  digest: string
): PreparedFile => {
  const note = `session ${sessionId} is already imported from ${other.path}`
  return {
    report: { path, status: "conflict", note, counts: { files_conflict: 1 } },
    write: recordConflict(path, stat, note, digest)
  }
}

/**
 * Messages inside a byte range a person made blctx forget are never stored again: not on a
 * re-import, not when an append re-reads the last stored turn, not after a rewrite or a move.
 */
const withoutForgotten = (stored: SourceFileRow | undefined, rows: ReadonlyArray<MessageRow>) =>
  Effect.map(stored === undefined ? Effect.succeed([]) : forgottenSpansOf(stored.id), (forgotten) =>
    forgotten.length === 0 ? rows : rows.filter((row) => !insideAny(forgotten, row))
  )

/** The chunks of each message to insert, a batch per call. */
const chunkMessages = (
  chunking: ImportChunking,
  insert: ReadonlyArray<MessageRow>,
  path: string,
  progress: Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const pieces: Array<ReadonlyArray<TextPiece>> = []
    for (let i = 0; i < insert.length; i += CHUNK_BATCH) {
      const batch = insert.slice(i, i + CHUNK_BATCH).map((row) => row.text)
      const chunked = yield* chunking
        .chunkAll(batch)
        .pipe(Effect.mapError((e) => ChunkingFailed.of(chunking.tokenizer, path, e)))
      for (let j = 0; j < batch.length; j++) pieces.push(chunked[j] ?? [])
      yield* progress
    }
    return pieces
  })

/** One vector per chunk, in order, `EMBED_BATCH` texts per call to the model. */
const embedPieces = (
  model: ImportEmbedding,
  pieces: ReadonlyArray<ReadonlyArray<TextPiece>>,
  path: string,
  progress: Effect.Effect<void>
) =>
  Effect.gen(function* () {
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
    return out
  })

/** The vectors of the chunks when a model is there; none leaves them pending. */
const embedWhenModel = (
  embedding: Option.Option<ImportEmbedding>,
  pieces: ReadonlyArray<ReadonlyArray<TextPiece>>,
  path: string,
  options: Required<PrepareOptions>
) =>
  Option.match(embedding, {
    onNone: () => Effect.succeed(Option.none<ReadonlyArray<Float32Array>>()),
    onSome: (model) =>
      options.stage("embedding").pipe(
        Effect.zipRight(embedPieces(model, pieces, path, options.progress)),
        Effect.map((vectors): Option.Option<ReadonlyArray<Float32Array>> => Option.some(vectors))
      )
  })

type ReadContent = Effect.Effect.Success<ReturnType<typeof readAndClassify>>

/** What importing a file that was read does, in figures. */
interface ImportOutcome {
  readonly path: string
  readonly append: boolean
  readonly known: Known
  readonly content: ReadContent
  readonly changes: Reconciliation
  readonly forgottenCount: number
  readonly chunkCount: number
  readonly embedded: boolean
}

const importReport = ({ path, append, known, content, changes, forgottenCount, chunkCount, embedded }: ImportOutcome) =>
  ({
    path,
    status: append ? "appended" : "imported",
    ...(known.moved && known.stored !== undefined ? { note: `moved from ${known.stored.path}` } : {}),
    ...(content.problem === undefined ? {} : { problem: content.problem }),
    counts: {
      [append ? "files_appended" : "files_imported"]: 1,
      ...(known.moved ? { files_moved: 1 } : {}),
      messages_added: changes.insert.length,
      messages_removed: changes.remove.length,
      messages_kept: changes.keep.size,
      messages_relocated: changes.relocate.length,
      ...(forgottenCount > 0 ? { messages_forgotten: forgottenCount } : {}),
      chunks_added: chunkCount,
      vectors_added: embedded ? chunkCount : 0,
      vectors_pending: embedded ? 0 : chunkCount,
      redactions: content.redactions,
      ...(content.metadataRedactions > 0 ? { metadata_redactions: content.metadataRedactions } : {}),
      records: content.records,
      unclassified: content.unclassified,
      parse_errors: content.parseErrors,
      bytes_parsed: content.bytesParsed
    }
  }) satisfies FileReport

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
    const settings = { progress: options.progress ?? Effect.void, stage: options.stage ?? (() => Effect.void) }
    const { chunking, embedding } = yield* ImportServices
    const opened = yield* openTranscript(path, settings.progress)
    if (opened._tag === "Skipped") return opened.file
    const { handle, format } = opened
    const stat = statOf(handle)
    const found = yield* findKnown(path, stat)
    if (isUnchanged(found, stat)) return prepared({ report: unchangedReport(path), write: Effect.void })

    const read = yield* readFile(path, handle, format, found, stat)
    if (read._tag === "Unreadable") return unreadableFile(path, read.note)
    if (read._tag === "MovedUnchanged") return movedUnchanged(path, stat, read.from)
    const { append, start, content } = read
    yield* settings.progress

    const sessionId = content.session?.id ?? found.stored?.session_id ?? null
    const claim = yield* claimSession(sessionId, found)
    if (claim._tag === "Conflict") return conflict(path, stat, claim.other, sessionId ?? "", content.digest)
    const { known } = claim

    const rows = yield* withoutForgotten(known.stored, content.rows)
    const existing = known.stored === undefined ? [] : yield* storedMessagesFrom(known.stored.id, start.byte)
    const changes = reconcile(rows, existing)
    yield* settings.stage("chunking")
    const pieces = yield* chunkMessages(chunking, changes.insert, path, settings.progress)
    const vectors = yield* embedWhenModel(embedding, pieces, path, settings)

    const chunkCount = pieces.reduce((n, p) => n + p.length, 0)
    const forgottenCount = content.rows.length - rows.length
    const outcome = {
      path,
      append,
      known,
      content,
      changes,
      forgottenCount,
      chunkCount,
      embedded: Option.isSome(vectors)
    }
    return prepared({
      report: importReport(outcome),
      write: writeImport({
        path,
        sessionId,
        stat,
        content,
        storedId: known.stored?.id,
        format,
        tokenizer: chunking.tokenizer,
        embedding,
        changes,
        pieces,
        vectors
      })
    })
  })
