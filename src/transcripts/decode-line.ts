import { Either, ParseResult, Schema } from "effect"
import type { RawLine } from "./line-splitter.js"
import { RolloutEntry, type TranscriptRecord, type UnreadableReason } from "./record.js"

const utf8 = new TextDecoder("utf-8", { fatal: true })
const decodeEntry = Schema.decodeUnknownEither(RolloutEntry, { onExcessProperty: "preserve" })

const MESSAGE_LIMIT = 200
const short = (text: string) => (text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text)

/** Whether a line holds only whitespace (such lines are not records). */
export const isBlank = (bytes: Uint8Array | null): boolean => {
  if (bytes === null) return false
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false
  return true
}

/**
 * Turns one raw line into a record, or a parse-error record saying why not. Never throws: any
 * bytes at all give one of the two.
 */
export const decodeLine = (raw: RawLine, maxLineBytes: number): TranscriptRecord => {
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
  const decoded = decodeEntry(value)
  if (Either.isLeft(decoded)) {
    return unreadable("not_a_record", short(ParseResult.TreeFormatter.formatErrorSync(decoded.left)))
  }
  return { kind: "record", ...position, entry: decoded.right as RolloutEntry }
}
