import { createHash } from "node:crypto"
import { Effect } from "effect"
import { redactSession } from "../redaction/redact-metadata.js"
import type { TranscriptSummary } from "../transcripts/classification.js"
import type { TranscriptFormat } from "../transcripts/formats/transcript-format.js"
import { TranscriptFileError, type TranscriptHandle } from "../transcripts/transcript-files.js"
import { makePace } from "./event-loop-pace.js"
import { forEachImportRecord } from "./import-records.js"
import { messageRowBuilder, resumePoint } from "./message-rows.js"

/**
 * Reading one transcript for the importer: its reads guarded against a file that shrinks, its
 * bytes hashed once whoever reads them, and the one streaming pass that classifies and redacts.
 */

const HASH_BLOCK = 1024 * 1024
/**
 * Bytes per read of the classifying pass. Each read is a turn of the event loop, and the records
 * it completes are decoded and classified synchronously: a quarter of the shared reader's 1 MiB
 * keeps that to a few milliseconds, so the daemon's socket is never kept waiting for long.
 */
const READ_BYTES = 256 * 1024

export const describeDefect = (defect: unknown): string => {
  if (defect instanceof Error) return defect.name === "Error" ? defect.message : `${defect.name}: ${defect.message}`
  return String(defect)
}

/** Why a file that cannot be read is skipped, in words. Only a file that does not exist is missing. */
export const readProblem = (e: TranscriptFileError): string => {
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
export const guardedReads = (handle: TranscriptHandle, progress: Effect.Effect<void>): TranscriptHandle => {
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
export const makeFileHash = (handle: TranscriptHandle) => {
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

export type FileHash = ReturnType<typeof makeFileHash>

/** The SHA-256 of the file's bytes `[0, size)`, read again. */
export const digestOf = (handle: TranscriptHandle, size: number) =>
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

export interface Start {
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
export const readAndClassify = (file: FileHash, size: number, start: Start, format: TranscriptFormat) =>
  Effect.gen(function* () {
    const classifier = format.summarizer()
    yield* forEachImportRecord(
      file.feeding,
      {
        from: start,
        chunkBytes: READ_BYTES,
        ...(format.decidedByType === undefined ? {} : { decidedByType: format.decidedByType }),
        ...(format.untypedType === undefined ? {} : { untypedType: format.untypedType })
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
