import { Either, ParseResult, Schema } from "effect"
import type { RawLine } from "./line-splitter.js"
import { RolloutEntry, type TranscriptRecord, type UnreadableReason } from "./record.js"

const utf8 = new TextDecoder("utf-8", { fatal: true })
const decodeEntry = Schema.decodeUnknownEither(RolloutEntry, { onExcessProperty: "preserve" })

const MESSAGE_LIMIT = 200
const short = (text: string) => (text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text)

/**
 * The deepest nesting of arrays and objects a line may have to be decoded. Everything that walks a
 * decoded record recursively (Schema's error formatter, JSON.stringify, the classifier's decoders)
 * is then bounded: those overflow Node's default stack between about 2,000 and 4,000 levels, so
 * 256 leaves them a wide margin even deep inside a fiber. It is twice the limit of serde_json, with
 * which Codex writes and reads its rollouts (128), so no line Codex can read back is refused.
 */
export const MAX_NESTING_DEPTH = 256

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

/**
 * How deeply arrays and objects nest in the JSON text `bytes` (0 for a scalar), counting only
 * brackets outside strings (escapes respected). One linear pass without recursion or allocation;
 * it stops as soon as the depth passes `limit` and then returns `limit + 1`. UTF-8 needs no
 * decoding for this: every byte of a multi-byte character is ≥ 0x80, so none looks like a bracket.
 * For text that is not valid JSON the answer only bounds what a parser would see.
 */
export const nestingDepth = (bytes: Uint8Array, limit: number): number => {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b === QUOTE) {
      const end = stringEnd(bytes, i + 1)
      if (end === -1) return deepest
      i = end
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > limit) return limit + 1
      }
    } else if ((b === CLOSE_BRACKET || b === CLOSE_BRACE) && depth > 0) depth--
  }
  return deepest
}

/** Strings up to this many bytes are scanned byte by byte; past it, from quote to quote. */
const SHORT_STRING = 64

/**
 * The index of the quote that closes the string whose first byte is at `from`, or -1. Short
 * strings are walked byte by byte; a long one (tool output, file contents) is crossed with a
 * native search for the next quote, which closes the string unless an odd run of backslashes
 * precedes it. Every byte is looked at a bounded number of times.
 */
const stringEnd = (bytes: Uint8Array, from: number): number => {
  const stop = Math.min(bytes.length, from + SHORT_STRING)
  let i = from
  for (; i < stop; i++) {
    const b = bytes[i]
    if (b === BACKSLASH) i++
    else if (b === QUOTE) return i
  }
  for (;;) {
    const quote = bytes.indexOf(QUOTE, i)
    if (quote === -1) return -1
    let backslashes = 0
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote
    i = quote + 1
  }
}

/** Occurrences of `byte` in `bytes`, counted up to `max + 1` (native search, no per-byte loop). */
const countUpTo = (bytes: Uint8Array, byte: number, max: number): number => {
  let n = 0
  for (let at = bytes.indexOf(byte); at !== -1 && n <= max; at = bytes.indexOf(byte, at + 1)) n++
  return n
}

/**
 * Whether `bytes` nests deeper than `limit`. Most lines hold fewer opening brackets in all (strings
 * included) than the limit and cannot nest past it: that is settled with a native byte search;
 * only the rest get the exact scan.
 */
export const exceedsNestingDepth = (bytes: Uint8Array, limit: number): boolean => {
  const brackets = countUpTo(bytes, OPEN_BRACKET, limit)
  if (brackets + countUpTo(bytes, OPEN_BRACE, limit - brackets) <= limit) return false
  return nestingDepth(bytes, limit) > limit
}

/** Whether a line holds only whitespace (such lines are not records). */
export const isBlank = (bytes: Uint8Array | null): boolean => {
  if (bytes === null) return false
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false
  return true
}

/** What a JSON value is, in a few words (never the value itself, which may be huge). */
const kindOf = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "an array"
  switch (typeof value) {
    case "object":
      return "an object"
    case "string":
      return "a string"
    case "number":
      return "a number"
    case "boolean":
      return "a boolean"
    default:
      return typeof value
  }
}

/** Why a parsed value is not a rollout entry, without formatting the value; undefined when it is one. */
const shapeProblem = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `line is ${kindOf(value)}, not a record object`
  }
  const fields = value as { readonly type?: unknown; readonly timestamp?: unknown }
  if (fields.type === undefined) return 'record has no "type" field'
  if (typeof fields.type !== "string") return `"type" is ${kindOf(fields.type)}, not a string`
  if (fields.timestamp !== undefined && typeof fields.timestamp !== "string") {
    return `"timestamp" is ${kindOf(fields.timestamp)}, not a string`
  }
  return undefined
}

/**
 * Names the type of a record object written without a `type` field, or null when such an object
 * is not a record (`TranscriptFormat.untypedType`: Gemini CLI's session header and its `$set` and
 * `$rewindTo` lines carry none). The record is then kept with that `type`, as if written with it.
 */
export type UntypedType = (record: Readonly<Record<string, unknown>>) => string | null

/** The value with the type its format names for it, when it is an object written without one. */
const typed = (value: unknown, untypedType: UntypedType | undefined): unknown => {
  if (untypedType === undefined || typeof value !== "object" || value === null || Array.isArray(value)) return value
  const record = value as Readonly<Record<string, unknown>>
  if (record.type !== undefined) return value
  const type = untypedType(record)
  return type === null ? value : { ...record, type }
}

const decodeUnguarded = (raw: RawLine, maxLineBytes: number, untypedType?: UntypedType): TranscriptRecord => {
  const position = { line: raw.line, byte_start: raw.byte_start, byte_end: raw.byte_end }
  const unreadable = (reason: UnreadableReason, message: string): TranscriptRecord => ({
    kind: "parse_error",
    ...position,
    reason,
    message
  })
  if (raw.bytes === null) {
    return unreadable(
      "line_too_long",
      `line is ${raw.byte_end - raw.byte_start} bytes, over the ${maxLineBytes}-byte limit; skipped unread`
    )
  }
  if (!raw.terminated) {
    return unreadable("truncated_line", "no newline before the end of the captured file (still being written?)")
  }
  // Before anything builds or walks the value: the scan is linear and needs no stack.
  if (exceedsNestingDepth(raw.bytes, MAX_NESTING_DEPTH)) {
    return unreadable("too_deep", `arrays and objects nest deeper than ${MAX_NESTING_DEPTH} levels; skipped unparsed`)
  }
  let text: string
  try {
    text = utf8.decode(raw.bytes)
  } catch {
    return unreadable("invalid_utf8", "line is not valid UTF-8")
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return unreadable("invalid_json", short(error instanceof Error ? error.message : String(error)))
  }
  value = typed(value, untypedType)
  const problem = shapeProblem(value)
  if (problem !== undefined) return unreadable("not_a_record", problem)
  const decoded = decodeEntry(value)
  if (Either.isLeft(decoded)) {
    return unreadable("not_a_record", short(ParseResult.TreeFormatter.formatErrorSync(decoded.left)))
  }
  return { kind: "record", ...position, entry: decoded.right as RolloutEntry }
}

/**
 * Turns one raw line into a record, or a parse-error record saying why not. Never throws: any
 * bytes at all give one of the two. Work is linear in the line's length (at most `maxLineBytes`)
 * and nesting is bounded before parsing, so no line can exhaust the stack.
 */
export const decodeLine = (raw: RawLine, maxLineBytes: number, untypedType?: UntypedType): TranscriptRecord => {
  try {
    return decodeUnguarded(raw, maxLineBytes, untypedType)
  } catch (error) {
    // Defence in depth: one line must never fail its file, whatever it holds.
    return {
      kind: "parse_error",
      line: raw.line,
      byte_start: raw.byte_start,
      byte_end: raw.byte_end,
      reason: "decode_failed",
      message: short(
        `could not be decoded: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`
      )
    }
  }
}
