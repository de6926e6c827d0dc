import { isUtf8 } from "node:buffer"
import { Effect } from "effect"
import {
  decodeLine,
  exceedsNestingDepth,
  isBlank,
  MAX_NESTING_DEPTH,
  type UntypedType
} from "../transcripts/decode-line.js"
import type { RawLine } from "../transcripts/line-splitter.js"
import { DEFAULT_CHUNK_BYTES, DEFAULT_MAX_LINE_BYTES } from "../transcripts/reader.js"
import type { RolloutEntry, TranscriptRecord } from "../transcripts/record.js"
import type { TranscriptFileError, TranscriptHandle } from "../transcripts/transcript-files.js"

/**
 * The importer's record source: the same records as the shared reader (`recordsOf`: same lines,
 * positions, blank lines skipped, `decodeLine` for every line it decodes), read in the same
 * single pass, with two differences that bound what a large transcript costs in memory:
 *
 * - The bytes of a line that spans reads are gathered in one buffer reused from line to line,
 *   rather than in new copies for each line: a file of multi-MiB tool outputs does not leave a
 *   trail of buffers for the garbage collector to find later.
 * - A long line (at least `SKIM_FROM` bytes) whose record is decided by its type alone (a tool's
 *   output, reasoning, token counts: `decidedByType`) is checked in place (valid UTF-8, valid
 *   JSON, not too deep, a record object with a string `type`) and handed on without its payload:
 *   the importer never indexes that text, so it never turns it into strings. A line that does not
 *   pass every check, or that is anything else, is decoded by `decodeLine` as the reader would.
 *
 * Measured on a 200 MiB transcript of tool output, this is the difference between a peak RSS of
 * about 185 MiB and one under 150 MiB (`npm run bench -- importer`).
 */

/** Lines at least this long are checked in place when their type allows it. */
export const SKIM_FROM = 64 * 1024

/** A reused line buffer larger than this is let go once its line is done. */
const KEEP_LINE_BUFFER = 4 * 1024 * 1024

/** Type, timestamp and payload type are read from their JSON text only when this short. */
const MAX_SCALAR_BYTES = 4096

const NEWLINE = 0x0a
const QUOTE = 0x22
const BACKSLASH = 0x5c

const utf8 = new TextDecoder("utf-8", { fatal: true })

export interface ImportReadOptions {
  /** Resume at a line start (an append): the `byte` and `line` of its first byte. */
  readonly from?: { readonly byte: number; readonly line: number }
  /** Bytes per read (default 1 MiB). */
  readonly chunkBytes?: number
  /** Longest line that is decoded (default 16 MiB); longer ones are `line_too_long`. */
  readonly maxLineBytes?: number
  /** Lines at least this long may be checked in place (default `SKIM_FROM`; tests lower it). */
  readonly skimFrom?: number
  /**
   * The format's records decided by type alone (`TranscriptFormat.decidedByType`): only those
   * are checked in place and passed on without their payload. Without it every line is decoded.
   */
  readonly decidedByType?: (type: string, payloadType: string | null) => boolean
  /** The format's types for lines written without a `type` (`TranscriptFormat.untypedType`). */
  readonly untypedType?: UntypedType
}

/** Where a JSON value sits in the line: `[start, end)`. */
interface Span {
  readonly start: number
  readonly end: number
}

/** What the in-place check learns about a record line: its top-level keys and a few values. */
interface LineShape {
  readonly keys: ReadonlyArray<string>
  readonly type?: Span
  readonly timestamp?: Span
  readonly payloadType?: Span
  /** `payload` is an object whose `type` member appears more than once (JSON.parse keeps the last). */
  readonly payloadTypeRepeated: boolean
}

/**
 * A validating scan of one JSON text, allocating nothing per byte: it accepts exactly what
 * `JSON.parse` accepts (RFC 8259: strings without raw control characters, the escapes it allows,
 * its number grammar, whitespace between tokens). Nesting is bounded by the caller first.
 */
class Scanner {
  i = 0
  constructor(readonly b: Uint8Array) {}

  ws() {
    const b = this.b
    let i = this.i
    while (i < b.length) {
      const c = b[i]
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++
      else break
    }
    this.i = i
  }

  private isHex(c: number | undefined) {
    return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))
  }

  /** At a quote: past the closing quote, or false. */
  string(): boolean {
    const b = this.b
    let i = this.i + 1
    for (;;) {
      if (i >= b.length) return false
      const c = b[i] as number
      if (c === QUOTE) {
        this.i = i + 1
        return true
      }
      if (c === BACKSLASH) {
        const e = b[i + 1]
        if (
          e === 0x22 ||
          e === 0x5c ||
          e === 0x2f ||
          e === 0x62 ||
          e === 0x66 ||
          e === 0x6e ||
          e === 0x72 ||
          e === 0x74
        ) {
          i += 2
        } else if (e === 0x75) {
          if (!(this.isHex(b[i + 2]) && this.isHex(b[i + 3]) && this.isHex(b[i + 4]) && this.isHex(b[i + 5])))
            return false
          i += 6
        } else return false
      } else if (c < 0x20) return false
      else i++
    }
  }

  private digits(): boolean {
    const b = this.b
    const start = this.i
    while (this.i < b.length && (b[this.i] as number) >= 0x30 && (b[this.i] as number) <= 0x39) this.i++
    return this.i > start
  }

  number(): boolean {
    const b = this.b
    if (b[this.i] === 0x2d) this.i++
    if (b[this.i] === 0x30) this.i++
    else if ((b[this.i] ?? 0) >= 0x31 && (b[this.i] ?? 0) <= 0x39) this.digits()
    else return false
    if (b[this.i] === 0x2e) {
      this.i++
      if (!this.digits()) return false
    }
    if (b[this.i] === 0x65 || b[this.i] === 0x45) {
      this.i++
      if (b[this.i] === 0x2b || b[this.i] === 0x2d) this.i++
      if (!this.digits()) return false
    }
    return true
  }

  private literal(word: string): boolean {
    for (let k = 0; k < word.length; k++) if (this.b[this.i + k] !== word.charCodeAt(k)) return false
    this.i += word.length
    return true
  }

  /** Any value; `depth` is that of its container (the caller bounded nesting beforehand). */
  value(depth: number): boolean {
    if (depth > MAX_NESTING_DEPTH) return false
    switch (this.b[this.i]) {
      case QUOTE:
        return this.string()
      case 0x7b:
        return this.object(depth + 1, undefined)
      case 0x5b:
        return this.array(depth + 1)
      case 0x74:
        return this.literal("true")
      case 0x66:
        return this.literal("false")
      case 0x6e:
        return this.literal("null")
      default:
        return this.number()
    }
  }

  private array(depth: number): boolean {
    const b = this.b
    this.i++
    this.ws()
    if (b[this.i] === 0x5d) {
      this.i++
      return true
    }
    for (;;) {
      this.ws()
      if (!this.value(depth)) return false
      this.ws()
      if (b[this.i] === 0x2c) {
        this.i++
        continue
      }
      if (b[this.i] === 0x5d) {
        this.i++
        return true
      }
      return false
    }
  }

  /**
   * An object; `member` is told each key's span and the span of its value (after the value was
   * scanned). Returns false when the text is not valid JSON.
   */
  object(depth: number, member: ((key: Span, value: Span) => boolean) | undefined): boolean {
    const b = this.b
    this.i++
    this.ws()
    if (b[this.i] === 0x7d) {
      this.i++
      return true
    }
    for (;;) {
      this.ws()
      if (b[this.i] !== QUOTE) return false
      const keyStart = this.i
      if (!this.string()) return false
      const key = { start: keyStart, end: this.i }
      this.ws()
      if (b[this.i] !== 0x3a) return false
      this.i++
      this.ws()
      const valueStart = this.i
      if (!this.value(depth)) return false
      if (member !== undefined && !member(key, { start: valueStart, end: this.i })) return false
      this.ws()
      if (b[this.i] === 0x2c) {
        this.i++
        continue
      }
      if (b[this.i] === 0x7d) {
        this.i++
        return true
      }
      return false
    }
  }
}

/** A short JSON string token's value, exactly as JSON.parse reads it; undefined when it is not one or too long. */
const shortString = (bytes: Uint8Array, span: Span): string | undefined => {
  if (span.end - span.start > MAX_SCALAR_BYTES || bytes[span.start] !== QUOTE) return undefined
  const value: unknown = JSON.parse(utf8.decode(bytes.subarray(span.start, span.end)))
  return typeof value === "string" ? value : undefined
}

/** The longest key token that can read as `type` (every letter escaped: `"\u0074\u0079\u0070\u0065"`). */
const MAX_TYPE_KEY_BYTES = 26

/** Scans a whole line that should be a record object; undefined unless it is valid JSON of that shape. */
const shapeOf = (bytes: Uint8Array): LineShape | undefined => {
  const scan = new Scanner(bytes)
  const keys: Array<string> = []
  let type: Span | undefined
  let timestamp: Span | undefined
  let payloadType: Span | undefined
  let payloadTypeRepeated = false
  const payloadMember = (key: Span, value: Span) => {
    if (key.end - key.start <= MAX_TYPE_KEY_BYTES && shortString(bytes, key) === "type") {
      if (payloadType !== undefined) payloadTypeRepeated = true
      payloadType = value
    }
    return true
  }
  scan.ws()
  if (bytes[scan.i] !== 0x7b) return undefined
  scan.i++
  scan.ws()
  if (bytes[scan.i] === 0x7d) scan.i++
  else {
    for (;;) {
      scan.ws()
      if (bytes[scan.i] !== QUOTE) return undefined
      const keyStart = scan.i
      if (!scan.string()) return undefined
      const key = shortString(bytes, { start: keyStart, end: scan.i })
      // A repeated key (JSON.parse keeps its last value) or `__proto__` is left to the full decoder.
      if (key === undefined || key === "__proto__" || keys.includes(key)) return undefined
      keys.push(key)
      scan.ws()
      if (bytes[scan.i] !== 0x3a) return undefined
      scan.i++
      scan.ws()
      const valueStart = scan.i
      const valid = key === "payload" && bytes[scan.i] === 0x7b ? scan.object(2, payloadMember) : scan.value(1)
      if (!valid) return undefined
      if (key === "type") type = { start: valueStart, end: scan.i }
      else if (key === "timestamp") timestamp = { start: valueStart, end: scan.i }
      scan.ws()
      if (bytes[scan.i] === 0x2c) {
        scan.i++
        continue
      }
      if (bytes[scan.i] === 0x7d) {
        scan.i++
        break
      }
      return undefined
    }
  }
  scan.ws()
  if (scan.i !== bytes.length) return undefined
  return {
    keys,
    ...(type === undefined ? {} : { type }),
    ...(timestamp === undefined ? {} : { timestamp }),
    ...(payloadType === undefined ? {} : { payloadType }),
    payloadTypeRepeated
  }
}

/**
 * The record a long line is, checked in place, when its record is decided by its type alone:
 * the entry holds its keys (values left out), its `type` and `timestamp`, and a payload reduced
 * to its `type`. Undefined when the line is anything else or fails any check `decodeLine` makes;
 * then `decodeLine` decides, with the reason it gives.
 */
export const skimEntry = (
  bytes: Uint8Array,
  decidedByType: (type: string, payloadType: string | null) => boolean
): RolloutEntry | undefined => {
  try {
    return skimChecked(bytes, decidedByType)
  } catch {
    // Defence in depth: anything unexpected is the decoder's to judge.
    return undefined
  }
}

const skimChecked = (
  bytes: Uint8Array,
  decidedByType: (type: string, payloadType: string | null) => boolean
): RolloutEntry | undefined => {
  if (exceedsNestingDepth(bytes, MAX_NESTING_DEPTH) || !isUtf8(bytes)) return undefined
  const shape = shapeOf(bytes)
  if (shape === undefined || shape.type === undefined || shape.payloadTypeRepeated) return undefined
  const type = shortString(bytes, shape.type)
  if (type === undefined) return undefined
  const timestamp = shape.timestamp === undefined ? undefined : shortString(bytes, shape.timestamp)
  if (shape.timestamp !== undefined && timestamp === undefined) return undefined
  // As `payloadTypeOf` reads it: a string `type` member of an object payload, or none.
  const payloadType = shape.payloadType === undefined ? null : (shortString(bytes, shape.payloadType) ?? null)
  if (shape.payloadType !== undefined && payloadType === null && bytes[shape.payloadType.start] === QUOTE) {
    return undefined // a string too long to read here: let the decoder say what it is
  }
  if (!decidedByType(type, payloadType)) return undefined
  const entry: Record<string, unknown> = {}
  for (const key of shape.keys) entry[key] = null
  entry.type = type
  if (timestamp !== undefined) entry.timestamp = timestamp
  if (shape.keys.includes("payload")) entry.payload = payloadType === null ? null : { type: payloadType }
  return entry as RolloutEntry
}

/** How a read goes: `ImportReadOptions` with its defaults and bounds applied. */
interface ReadLimits {
  readonly chunkBytes: number
  readonly maxLineBytes: number
  readonly skimFrom: number
  readonly decidedByType: ImportReadOptions["decidedByType"]
  readonly untypedType: ImportReadOptions["untypedType"]
}

const readLimitsOf = (options: ImportReadOptions): ReadLimits => ({
  chunkBytes: Math.max(1, options.chunkBytes ?? DEFAULT_CHUNK_BYTES),
  maxLineBytes: Math.max(1, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES),
  skimFrom: Math.max(0, options.skimFrom ?? SKIM_FROM),
  decidedByType: options.decidedByType,
  untypedType: options.untypedType
})

/** A line's record: checked in place when it is long and decided by its type, else decoded. */
const recordOfLine = (raw: RawLine, limits: ReadLimits): TranscriptRecord => {
  const { bytes } = raw
  const entry =
    limits.decidedByType !== undefined && bytes !== null && raw.terminated && bytes.length >= limits.skimFrom
      ? skimEntry(bytes, limits.decidedByType)
      : undefined
  return entry === undefined
    ? decodeLine(raw, limits.maxLineBytes, limits.untypedType)
    : { kind: "record", line: raw.line, byte_start: raw.byte_start, byte_end: raw.byte_end, entry }
}

/**
 * The unfinished line, gathered across reads in one reused buffer; once it grows past the longest
 * line decoded, only that it overflowed is kept.
 */
class HeldLine {
  private buffer = new Uint8Array(0)
  private length = 0
  private overflow = false

  constructor(private readonly maxLineBytes: number) {}

  /** Nothing held: a line that ends in this read can be handed on where it lies. */
  get isEmpty() {
    return this.length === 0 && !this.overflow
  }

  add(part: Uint8Array) {
    if (this.overflow || part.length === 0) return
    if (this.length + part.length > this.maxLineBytes) {
      this.overflow = true
      this.length = 0
      return
    }
    if (this.length + part.length > this.buffer.length) {
      const grown = new Uint8Array(
        Math.min(this.maxLineBytes, Math.max(this.buffer.length * 2, this.length + part.length))
      )
      grown.set(this.buffer.subarray(0, this.length))
      this.buffer = grown
    }
    this.buffer.set(part, this.length)
    this.length += part.length
  }

  /** The line's bytes, or null when it overflowed; valid until `clear`. */
  bytes(): Uint8Array | null {
    return this.overflow ? null : this.buffer.subarray(0, this.length)
  }

  clear() {
    this.length = 0
    this.overflow = false
    if (this.buffer.length > KEEP_LINE_BUFFER) this.buffer = new Uint8Array(0)
  }
}

/** Cuts reads into lines, numbered and placed in the file, and hands each line's record to `f`. */
class RecordSplitter {
  private readonly held: HeldLine
  private lineNumber: number
  private lineStart: number

  constructor(
    private readonly limits: ReadLimits,
    from: { readonly byte: number; readonly line: number },
    private readonly f: (record: TranscriptRecord) => void
  ) {
    this.held = new HeldLine(limits.maxLineBytes)
    this.lineNumber = from.line
    this.lineStart = from.byte
  }

  /** The lines `chunk` (the bytes at `offset`) completes; the rest is held for the next read. */
  split(chunk: Uint8Array, offset: number) {
    let from = 0
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, from)
      if (newline === -1) {
        this.held.add(chunk.subarray(from))
        return
      }
      if (this.held.isEmpty) {
        const line = chunk.subarray(from, newline)
        this.emit(line.length > this.limits.maxLineBytes ? null : line, offset + newline, true)
      } else {
        this.held.add(chunk.subarray(from, newline))
        this.finishHeld(offset + newline, true)
      }
      this.lineStart = offset + newline + 1
      from = newline + 1
    }
  }

  /** The last line, when the file ends without a newline after it. */
  end(position: number) {
    if (this.lineStart < position) this.finishHeld(position, false)
  }

  private finishHeld(end: number, terminated: boolean) {
    this.emit(this.held.bytes(), end, terminated)
    this.held.clear()
  }

  private emit(bytes: Uint8Array | null, end: number, terminated: boolean) {
    const raw: RawLine = { line: this.lineNumber, byte_start: this.lineStart, byte_end: end, bytes, terminated }
    this.lineNumber++
    if (isBlank(bytes)) return
    this.f(recordOfLine(raw, this.limits))
  }
}

/**
 * Calls `f` with every record of `handle` up to the size captured at open, in file order, one
 * read at a time: nothing is collected, and a record is dropped once `f` returns.
 */
export const forEachImportRecord = (
  handle: TranscriptHandle,
  options: ImportReadOptions,
  f: (record: TranscriptRecord) => void
): Effect.Effect<void, TranscriptFileError> =>
  Effect.suspend(() => {
    const limits = readLimitsOf(options)
    const size = handle.size
    const buffer = new Uint8Array(limits.chunkBytes)
    let position = Math.max(0, options.from?.byte ?? 0)
    const splitter = new RecordSplitter(limits, { byte: position, line: Math.max(1, options.from?.line ?? 1) }, f)
    return Effect.gen(function* () {
      while (position < size) {
        const want = Math.min(limits.chunkBytes, size - position)
        const read = yield* handle.readInto(position, want === limits.chunkBytes ? buffer : buffer.subarray(0, want))
        // The file shrank under us: what was read is all there is (as the shared reader does).
        if (read === 0) break
        splitter.split(buffer.subarray(0, read), position)
        position += read
      }
      splitter.end(position)
    })
  })
