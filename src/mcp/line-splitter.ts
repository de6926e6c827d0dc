/**
 * Splits a byte stream into newline-terminated lines, holding at most `maxLineBytes` of one line:
 * a longer line is dropped as it streams in, only its first bytes kept (to find a request id),
 * so memory stays bounded whatever a peer sends. Splitting bytes on `\n` is safe for UTF-8 (no
 * multi-byte character contains that byte), so characters cut across chunks come back whole.
 */

/** How much of an oversized line's start is kept to find its JSON-RPC id. */
export const OVERSIZED_HEAD_BYTES = 1024
/** How much of an oversized line's end is kept: serializers that put the id last put it there. */
export const OVERSIZED_TAIL_BYTES = 256

export type SplitLine =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Oversized"; readonly head: string; readonly tail: string; readonly bytes: number }

/** The first `n` bytes of the pieces, copied without joining the rest. */
const firstBytes = (pieces: ReadonlyArray<Buffer>, n: number): Buffer => {
  const kept: Array<Buffer> = []
  let length = 0
  for (const piece of pieces) {
    if (length >= n) break
    const part = piece.subarray(0, n - length)
    kept.push(part)
    length += part.length
  }
  return Buffer.concat(kept)
}

export class LineSplitter {
  private pieces: Array<Buffer> = []
  private held = 0
  /** Bytes of the current line dropped so far, or -1 while it is within the bound. */
  private dropped = -1
  private head: Buffer = Buffer.alloc(0)
  private tail: Buffer = Buffer.alloc(0)

  constructor(private readonly maxLineBytes: number) {}

  /** Bytes of the unfinished line held in memory (never more than the bound). */
  get bufferedBytes() {
    return this.held
  }

  /** The lines `chunk` completes, in order; the rest of it is kept for the next chunk. */
  push(chunk: Buffer): Array<SplitLine> {
    const lines: Array<SplitLine> = []
    let start = 0
    for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, end))
      lines.push(this.finish())
      start = end + 1
    }
    this.take(chunk.subarray(start))
    return lines
  }

  /** Forgets the unfinished line. */
  clear() {
    this.pieces = []
    this.held = 0
    this.dropped = -1
    this.head = Buffer.alloc(0)
    this.tail = Buffer.alloc(0)
  }

  private take(piece: Buffer) {
    if (piece.length === 0) return
    if (this.dropped >= 0) {
      this.dropped += piece.length
      this.keepTail(piece)
      return
    }
    if (this.held + piece.length <= this.maxLineBytes) {
      this.pieces.push(piece)
      this.held += piece.length
      return
    }
    // Past the bound: keep the head, drop the rest of the line as it comes.
    this.head = firstBytes([...this.pieces, piece], OVERSIZED_HEAD_BYTES)
    this.dropped = this.held + piece.length
    this.tail = Buffer.alloc(0)
    this.keepTail(piece)
    this.pieces = []
    this.held = 0
  }

  private keepTail(piece: Buffer) {
    const joined = piece.length >= OVERSIZED_TAIL_BYTES ? piece : Buffer.concat([this.tail, piece])
    this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - OVERSIZED_TAIL_BYTES)))
  }

  private finish(): SplitLine {
    if (this.dropped >= 0) {
      const line: SplitLine = {
        _tag: "Oversized",
        head: this.head.toString("utf8"),
        tail: this.tail.toString("utf8"),
        bytes: this.dropped
      }
      this.clear()
      return line
    }
    const text = Buffer.concat(this.pieces).toString("utf8")
    this.clear()
    return { _tag: "Line", text: text.endsWith("\r") ? text.slice(0, -1) : text }
  }
}
