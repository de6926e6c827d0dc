import * as NodePath from "node:path"
import { Tokenizer } from "@anush008/tokenizers"
import { Effect, Layer } from "effect"
import { ChunkTokenizer, TokenizerError, type TokenSpan } from "../src/chunking/chunk-tokenizer.js"
import { ConfigFile } from "../src/config/config-file.js"
import { activeModelFolder } from "../src/embedding/model-location.js"
import { Paths } from "../src/paths/paths.js"

const SURROGATE = /[\uD800-\uDFFF]/

/**
 * The tokenizer reports offsets in Unicode code points; JavaScript strings index UTF-16 code
 * units. Converts, so `text.slice(start, end)` is exactly the token's text.
 */
export const toUtf16Spans = (text: string, offsets: ReadonlyArray<ReadonlyArray<number>>): Array<TokenSpan> => {
  if (!SURROGATE.test(text)) return offsets.map((o) => [o[0] ?? 0, o[1] ?? 0] as const)
  const unitAt: Array<number> = []
  let unit = 0
  for (const ch of text) {
    unitAt.push(unit)
    unit += ch.length
  }
  unitAt.push(unit)
  return offsets.map((o) => [unitAt[o[0] ?? 0] ?? unit, unitAt[o[1] ?? 0] ?? unit] as const)
}

/** Token spans from a `tokenizer.json` (no truncation, no special tokens). */
export const makeChunkTokenizer = (path: string) =>
  Effect.try({
    try: () => Tokenizer.fromFile(path),
    catch: (error) =>
      new TokenizerError({
        path,
        message: `cannot load the tokenizer: ${error instanceof Error ? error.message : String(error)}`
      })
  }).pipe(
    Effect.map((tokenizer) =>
      ChunkTokenizer.of({
        spans: (text) =>
          Effect.tryPromise({
            try: async () => {
              const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false })
              return toUtf16Spans(text, encoding.getOffsets())
            },
            catch: (error) =>
              new TokenizerError({ path, message: error instanceof Error ? error.message : String(error) })
          }),
        spansBatch: (texts) =>
          Effect.tryPromise({
            try: async () => {
              if (texts.length === 0) return []
              const encodings = await tokenizer.encodeBatch([...texts], { addSpecialTokens: false })
              return encodings.map((encoding, i) => toUtf16Spans(texts[i] ?? "", encoding.getOffsets()))
            },
            catch: (error) =>
              new TokenizerError({ path, message: error instanceof Error ? error.message : String(error) })
          })
      })
    )
  )

/** The chunk tokenizer of a given `tokenizer.json`. */
export const chunkTokenizerFromFile = (path: string) => Layer.effect(ChunkTokenizer, makeChunkTokenizer(path))

/** The chunk tokenizer of the installed model (config.json's spec); fails if the model is not installed. */
export const ChunkTokenizerLive = Layer.effect(
  ChunkTokenizer,
  Effect.gen(function* () {
    const paths = yield* Paths
    const config = yield* (yield* ConfigFile).load()
    return yield* makeChunkTokenizer(NodePath.join(activeModelFolder(paths.cacheDir, config.model), "tokenizer.json"))
  })
)
