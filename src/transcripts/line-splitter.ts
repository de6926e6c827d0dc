import type { SourcePosition } from "./record.js"

/** One physical line, with its exact position. `bytes` is null when the line exceeded the limit. */
export interface RawLine extends SourcePosition {
  readonly bytes: Uint8Array | null
  /** Whether the line ended with a newline inside the captured bytes. */
  readonly terminated: boolean
}

const NEWLINE = 0x0a

const concat = (parts: ReadonlyArray<Uint8Array>, length: number): Uint8Array => {
  if (parts.length === 1) return parts[0] ?? new Uint8Array()
  const out = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/**
 * Splits a byte stream into lines in bounded memory: at most `maxLineBytes` of one line are
 * held; a longer line is still located exactly (its bytes are dropped, not buffered).
 */
export class LineSplitter {
  private offset: number
  private lineNumber: number
  private lineStart: number
  private parts: Array<Uint8Array> = []
  private partsLength = 0
  private overflow = false

  /** `startByte`/`startLine`: where the bytes fed in begin (a line start), to resume mid-file. */
  constructor(
    private readonly maxLineBytes: number,
    startByte = 0,
    startLine = 1
  ) {
    this.offset = startByte
    this.lineStart = startByte
    this.lineNumber = startLine
  }

  /** Holds part of an unfinished line; `copy` when the caller will reuse the chunk's memory. */
  private append(part: Uint8Array, copy: boolean) {
    if (part.length === 0) return
    if (this.overflow) return
    if (this.partsLength + part.length > this.maxLineBytes) {
      this.overflow = true
      this.parts = []
      this.partsLength = 0
      return
    }
    this.parts.push(copy ? part.slice() : part)
    this.partsLength += part.length
  }

  private take(byteEnd: number, terminated: boolean): RawLine {
    const line: RawLine = {
      line: this.lineNumber,
      byte_start: this.lineStart,
      byte_end: byteEnd,
      bytes: this.overflow ? null : concat(this.parts, this.partsLength),
      terminated
    }
    this.parts = []
    this.partsLength = 0
    this.overflow = false
    this.lineNumber++
    return line
  }

  /**
   * Feeds the next bytes; returns the lines they complete. The returned lines may share memory
   * with `chunk`: decode them before reusing it. Bytes kept for an unfinished line are copied.
   */
  push(chunk: Uint8Array): Array<RawLine> {
    const out: Array<RawLine> = []
    let from = 0
    while (from <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, from)
      if (newline === -1) {
        this.append(chunk.subarray(from), true)
        break
      }
      this.append(chunk.subarray(from, newline), false)
      out.push(this.take(this.offset + newline, true))
      this.lineStart = this.offset + newline + 1
      from = newline + 1
    }
    this.offset += chunk.length
    return out
  }

  /** The end of the captured bytes: an unterminated last line, if any. */
  end(): Array<RawLine> {
    if (this.lineStart >= this.offset) return []
    return [this.take(this.offset, false)]
  }
}
