import { Chunk, Effect, Either, Option, type Scope, Stream } from "effect"
import { decodeLine, isBlank, type UntypedType } from "./decode-line.js"
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
  /** The format's types for lines written without a `type` (`TranscriptFormat.untypedType`). */
  readonly untypedType?: UntypedType
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

/** Line bytes decoded per pull. */
const DECODE_BATCH_BYTES = 64 * 1024

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
  const untypedType = options.untypedType
  return Stream.suspend(() => {
    const startByte = Math.max(0, options.from?.byte ?? 0)
    const splitter = new LineSplitter(maxLineBytes, startByte, Math.max(1, options.from?.line ?? 1))
    let position = startByte
    let finished = false
    // One buffer per pass, reused: its lines are all decoded before the next read overwrites it.
    const buffer = new Uint8Array(chunkBytes)
    // Lines split but not yet decoded. They are decoded a small batch per pull, so only one batch
    // of decoded records is alive at a time (a whole buffer's worth would survive into the old heap).
    let pending: Array<RawLine> = []
    let next = 0
    const takeBatch = (): Chunk.Chunk<TranscriptRecord> => {
      const out: Array<TranscriptRecord> = []
      let bytes = 0
      while (next < pending.length && bytes < DECODE_BATCH_BYTES) {
        const raw = pending[next++]
        if (raw === undefined) break
        bytes += raw.byte_end - raw.byte_start + 1
        if (!isBlank(raw.bytes)) out.push(decodeLine(raw, maxLineBytes, untypedType))
      }
      return Chunk.unsafeFromArray(out)
    }
    const pull: Effect.Effect<Chunk.Chunk<TranscriptRecord>, Option.Option<TranscriptFileError>> = Effect.suspend(
      () => {
        if (next < pending.length) return Effect.succeed(takeBatch())
        if (finished) return Effect.fail(Option.none())
        if (position >= size) {
          finished = true
          pending = splitter.end()
          next = 0
          return Effect.succeed(takeBatch())
        }
        const want = Math.min(chunkBytes, size - position)
        return handle.readInto(position, want === chunkBytes ? buffer : buffer.subarray(0, want)).pipe(
          Effect.mapError(Option.some),
          Effect.map((read) => {
            if (read === 0) {
              // The file shrank under us: what was read so far is all there is.
              finished = true
              pending = splitter.end()
            } else {
              position += read
              pending = splitter.push(buffer.subarray(0, read))
            }
            next = 0
            return takeBatch()
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

/**
 * Runs `f` on every record of `records`, pulling batches directly. Prefer this to
 * `Stream.runForEach` on large files: it keeps far less garbage alive, so peak memory stays low.
 */
export const forEachRecord = <E>(
  records: Stream.Stream<TranscriptRecord, E>,
  f: (record: TranscriptRecord) => void
): Effect.Effect<void, E> =>
  Effect.scoped(
    Effect.gen(function* () {
      const pull = yield* Stream.toPull(records)
      while (true) {
        const step = yield* Effect.either(pull)
        if (Either.isLeft(step)) {
          if (Option.isNone(step.left)) return
          return yield* Effect.fail(step.left.value)
        }
        for (const record of step.right) f(record)
      }
    })
  )
