import { Schema } from "effect"

/**
 * One line of a Codex rollout file: `{timestamp, type, payload}`. Only `type` is required; every
 * other field, known or not, is kept as written (newer releases add `ordinal` and more).
 */
export const RolloutEntry = Schema.Struct({
  timestamp: Schema.optional(Schema.String),
  type: Schema.String,
  payload: Schema.optional(Schema.Unknown)
})
export type RolloutEntry = typeof RolloutEntry.Type & { readonly [key: string]: unknown }

/** Where a line sits in its file: `byte_end` is exclusive and excludes the newline. */
export interface SourcePosition {
  /** 1-based line number. */
  readonly line: number
  /** Offset of the line's first byte. */
  readonly byte_start: number
  /** Offset just past the line's last byte (the newline itself is not included). */
  readonly byte_end: number
}

export interface ParsedRecord extends SourcePosition {
  readonly kind: "record"
  readonly entry: RolloutEntry
}

export const UnreadableReason = Schema.Literal(
  "invalid_utf8",
  "invalid_json",
  "not_a_record",
  "line_too_long",
  /** Arrays and objects nested deeper than the reader decodes (`MAX_NESTING_DEPTH`). */
  "too_deep",
  "truncated_line",
  /** Decoding threw although it should not: the line is skipped, the file is read on. */
  "decode_failed"
)
export type UnreadableReason = typeof UnreadableReason.Type

/** A line that could not be read as a record. It still has its exact position. */
export interface UnreadableRecord extends SourcePosition {
  readonly kind: "parse_error"
  readonly reason: UnreadableReason
  readonly message: string
}

export type TranscriptRecord = ParsedRecord | UnreadableRecord

export const positionOf = (r: SourcePosition): SourcePosition => ({
  line: r.line,
  byte_start: r.byte_start,
  byte_end: r.byte_end
})
