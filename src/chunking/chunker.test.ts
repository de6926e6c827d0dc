import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { chunkTokenizerFromFile } from "../../layers/model-tokenizer-live.js"
import { testModelData, testTokenizerPath } from "../../testing/model-test-folder.js"
import { CHUNK_OVERLAP, CHUNK_TOKENS, Chunker, chunkSpans } from "./chunker.js"

const data = testModelData()
const ChunkerReal = Chunker.Default.pipe(Layer.provide(chunkTokenizerFromFile(testTokenizerPath(data ?? ""))))

/** `n` copies of `word` separated by single spaces. */
const repeat = (word: string, n: number) => Array.from({ length: n }, () => word).join(" ")

describe("chunkSpans", () => {
  const spans = (n: number) => Array.from({ length: n }, (_, i) => [i * 2, i * 2 + 1] as const)
  const text = "x ".repeat(2000)

  it("keeps a text of at most 384 tokens in one chunk and drops a text without tokens", () => {
    expect(chunkSpans(text, spans(384)).map((c) => [c.tokenStart, c.tokenEnd, c.start, c.end])).toEqual([
      [0, 384, 0, 767]
    ])
    expect(chunkSpans("   ", [])).toEqual([])
  })

  it("starts each chunk 336 tokens after the previous one, so 48 tokens overlap", () => {
    expect(CHUNK_TOKENS).toBe(384)
    expect(CHUNK_OVERLAP).toBe(48)
    expect(chunkSpans(text, spans(385)).map((c) => [c.index, c.tokenStart, c.tokenEnd])).toEqual([
      [0, 0, 384],
      [1, 336, 385]
    ])
    expect(chunkSpans(text, spans(720)).map((c) => [c.tokenStart, c.tokenEnd])).toEqual([
      [0, 384],
      [336, 720]
    ])
    expect(chunkSpans(text, spans(721)).map((c) => [c.tokenStart, c.tokenEnd])).toEqual([
      [0, 384],
      [336, 720],
      [672, 721]
    ])
  })

  it("refuses an overlap that is not smaller than the chunk", () => {
    expect(() => chunkSpans(text, spans(10), { size: 4, overlap: 4 })).toThrow(RangeError)
  })
})

describe("Chunker with the real bge-small-en tokenizer (BLCTX_TEST_MODEL_DATA)", () => {
  it.effect.skipIf(!data)("makes a short message one chunk covering its tokens", () =>
    Effect.gen(function* () {
      const chunker = yield* Chunker
      const text = "  How do I undo the last git commit?  "
      const chunks = yield* chunker.chunk(text)
      expect(chunks).toEqual([{ index: 0, tokenStart: 0, tokenEnd: 10, start: 2, end: 36, text: text.trim() }])
      expect(yield* chunker.chunk(" \n\t ")).toEqual([])
    }).pipe(Effect.provide(ChunkerReal))
  )

  it.effect.skipIf(!data)(
    "cuts 1000 one-token words at tokens 0-384, 336-720 and 672-1000 with exact character ranges",
    () =>
      Effect.gen(function* () {
        const chunker = yield* Chunker
        // "alpha" is one token; word i occupies characters [6i, 6i + 5).
        const text = repeat("alpha", 1000)
        const chunks = yield* chunker.chunk(text)
        expect(chunks.map((c) => [c.tokenStart, c.tokenEnd, c.start, c.end])).toEqual([
          [0, 384, 0, 383 * 6 + 5],
          [336, 720, 336 * 6, 719 * 6 + 5],
          [672, 1000, 672 * 6, 999 * 6 + 5]
        ])
        for (const c of chunks) expect(c.text).toBe(repeat("alpha", c.tokenEnd - c.tokenStart))
      }).pipe(Effect.provide(ChunkerReal))
  )

  it.effect.skipIf(!data)("reports ranges in JavaScript string indices when the text has emoji and accents", () =>
    Effect.gen(function* () {
      const chunker = yield* Chunker
      // Each "😀 é" is two tokens ([UNK], "e") in 4 UTF-16 units; with the separating space, unit k starts at 5k.
      const text = repeat("😀 é", 500)
      const chunks = yield* chunker.chunk(text)
      expect(chunks.map((c) => [c.tokenStart, c.tokenEnd, c.start, c.end])).toEqual([
        [0, 384, 0, 191 * 5 + 4],
        [336, 720, 168 * 5, 359 * 5 + 4],
        [672, 1000, 336 * 5, 499 * 5 + 4]
      ])
      expect(chunks[1]?.text.startsWith("😀 é")).toBe(true)
      expect(chunks[2]?.text.endsWith("😀 é")).toBe(true)
      for (const c of chunks) expect(c.text).toBe(text.slice(c.start, c.end))
    }).pipe(Effect.provide(ChunkerReal))
  )

  it.effect.skipIf(!data)("cuts between the word pieces of a word when a boundary falls inside it", () =>
    Effect.gen(function* () {
      const chunker = yield* Chunker
      // "word<i>" is two tokens ("word", "##<i>") for i < 10; 200 words make 400 tokens.
      const text = repeat("word7", 200)
      const chunks = yield* chunker.chunk(text)
      // Token 336 is "word" of word 168 (character 168 * 6); token 383 is "##7" of word 191.
      expect(chunks.map((c) => [c.tokenStart, c.tokenEnd, c.start, c.end])).toEqual([
        [0, 384, 0, 191 * 6 + 5],
        [336, 400, 168 * 6, 199 * 6 + 5]
      ])
    }).pipe(Effect.provide(ChunkerReal))
  )
})
