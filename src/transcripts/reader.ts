import { Chunk, Effect, Option, type Scope, Stream } from "effect"
import { decodeLine, isBlank } from "./decode-line.js"
import { LineSplitter, type RawLine } from "./line-splitter.js"
import type { TranscriptRecord } from "./record.js"
import { type TranscriptFileError, TranscriptFiles, type TranscriptHandle } from "./transcript-files.js"

export interface ReadOptions {
  /** Bytes per read (default 1 MiB). */
  readonly chunkBytes?: number
  /** Longest line that is decoded (default 16 MiB); longer lines become `line_too_long` records. */
  readonly maxLineBytes?: number
  /**
   * Resume at a known line start (e.g. an importer's checkpoint: the `byte_end + 1` and
   * `line + 1` of the last record it finished). Defaults to the start of the file.
   */
  readonly from?: { readonly byte: number; readonly line: number }
}

export const DEFAULT_CHUNK_BYTES = 1024 * 1024
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024

/** A transcript opened for reading, with the size captured at open. */
export interface OpenedTranscript {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  readonly dev: number
  readonly ino: number
  /** Every record up to the captured size, in file order. Each run reads the file again. */
  readonly records: Stream.Stream<TranscriptRecord, TranscriptFileError>
}

const decodeAll = (lines: ReadonlyArray<RawLine>, maxLineBytes: number): Chunk.Chunk<TranscriptRecord> => {
  const out: Array<TranscriptRecord> = []
  for (const raw of lines) if (!isBlank(raw.bytes)) out.push(decodeLine(raw, maxLineBytes))
  return Chunk.unsafeFromArray(out)
}

/**
 * The records of an open transcript up to the size captured at open, streamed line by line in
 * bounded memory (one read buffer plus at most one line). Each run reads the file again.
 */
export const recordsOf = (
  handle: TranscriptHandle,
  options: ReadOptions = {}
): Stream.Stream<TranscriptRecord, TranscriptFileError> => {
  const chunkBytes = Math.max(1, options.chunkBytes ?? DEFAULT_CHUNK_BYTES)
  const maxLineBytes = Math.max(1, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES)
  const size = handle.size
  return Stream.suspend(() => {
    const startByte = Math.max(0, options.from?.byte ?? 0)
    const splitter = new LineSplitter(maxLineBytes, startByte, Math.max(1, options.from?.line ?? 1))
    let position = startByte
    let finished = false
    const finish = () => {
      finished = true
      return decodeAll(splitter.end(), maxLineBytes)
    }
    const pull: Effect.Effect<Chunk.Chunk<TranscriptRecord>, Option.Option<TranscriptFileError>> = Effect.suspend(
      () => {
        if (finished) return Effect.fail(Option.none())
        if (position >= size) return Effect.succeed(finish())
        return handle.read(position, Math.min(chunkBytes, size - position)).pipe(
          Effect.mapError(Option.some),
          Effect.map((bytes) => {
            // The file shrank under us: what was read so far is all there is.
            if (bytes.length === 0) return finish()
            position += bytes.length
            return decodeAll(splitter.push(bytes), maxLineBytes)
          })
        )
      }
    )
    return Stream.repeatEffectChunkOption(pull)
  })
}

/** Opens a transcript and captures its size; `records` streams it (see `recordsOf`). */
export const openTranscript = Effect.fn("Transcripts.open")(function* (path: string, options: ReadOptions = {}) {
  const files = yield* TranscriptFiles
  const handle = yield* files.open(path)
  const opened: OpenedTranscript = {
    path,
    size: handle.size,
    mtimeMs: handle.mtimeMs,
    dev: handle.dev,
    ino: handle.ino,
    records: recordsOf(handle, options)
  }
  return opened
}) satisfies (
  path: string,
  options?: ReadOptions
) => Effect.Effect<OpenedTranscript, TranscriptFileError, TranscriptFiles | Scope.Scope>

/** Every record of a transcript, read once (convenience for tests and small files). */
export const readAllRecords = (path: string, options?: ReadOptions) =>
  Effect.scoped(
    Effect.flatMap(openTranscript(path, options), (t) =>
      Stream.runCollect(t.records).pipe(Effect.map((c) => ({ size: t.size, records: Chunk.toReadonlyArray(c) })))
    )
  )
