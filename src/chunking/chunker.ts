import { Effect } from "effect"
import { ChunkTokenizer, type TokenSpan } from "./chunk-tokenizer.js"

/** 384 tokens per chunk, 48 of them shared with the previous chunk. */
export const CHUNK_TOKENS = 384
export const CHUNK_OVERLAP = 48

export interface ChunkOptions {
  readonly size: number
  readonly overlap: number
}

/** One chunk of a message: its tokens `[tokenStart, tokenEnd)` and characters `[start, end)` of the text. */
export interface Chunk {
  readonly index: number
  readonly tokenStart: number
  readonly tokenEnd: number
  /** UTF-16 index of the first character of the first token. */
  readonly start: number
  /** UTF-16 index just past the last character of the last token. */
  readonly end: number
  /** `text.slice(start, end)`. */
  readonly text: string
}

const DEFAULTS: ChunkOptions = { size: CHUNK_TOKENS, overlap: CHUNK_OVERLAP }

/**
 * Splits a tokenized text into windows of `size` tokens, each starting `size - overlap` tokens
 * after the previous one, until a window reaches the last token. A text of at most `size`
 * tokens is one chunk; a text without tokens (empty or only whitespace) has no chunks.
 */
export const chunkSpans = (text: string, spans: ReadonlyArray<TokenSpan>, options: ChunkOptions = DEFAULTS) => {
  if (!(options.size > 0 && options.overlap >= 0 && options.overlap < options.size)) {
    throw new RangeError(`invalid chunk options: size ${options.size}, overlap ${options.overlap}`)
  }
  const chunks: Array<Chunk> = []
  const stride = options.size - options.overlap
  for (let tokenStart = 0; tokenStart < spans.length; tokenStart += stride) {
    const tokenEnd = Math.min(tokenStart + options.size, spans.length)
    const start = spans[tokenStart]?.[0] ?? 0
    const end = spans[tokenEnd - 1]?.[1] ?? start
    chunks.push({ index: chunks.length, tokenStart, tokenEnd, start, end, text: text.slice(start, end) })
    if (tokenEnd === spans.length) break
  }
  return chunks
}

/** Chunks message text on the embedding model's token boundaries. */
export class Chunker extends Effect.Service<Chunker>()("blctx/Chunker", {
  effect: Effect.gen(function* () {
    const tokenizer = yield* ChunkTokenizer
    const chunk = Effect.fn("Chunker.chunk")(function* (text: string, options: ChunkOptions = DEFAULTS) {
      const spans = yield* tokenizer.spans(text)
      return chunkSpans(text, spans, options)
    })
    return { chunk } as const
  })
}) {}
