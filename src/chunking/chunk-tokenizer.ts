import { Context, Data, type Effect } from "effect"

/** The tokenizer could not be loaded or failed on a text. */
export class TokenizerError extends Data.TaggedError("TokenizerError")<{
  readonly path: string
  readonly message: string
}> {}

/** A token's character range in the original text, in JavaScript string indices (UTF-16 code units). */
export type TokenSpan = readonly [start: number, end: number]

/**
 * The embedding model's tokenizer as chunking needs it: the character span of every token of a
 * text, without special tokens. Live: the model folder's `tokenizer.json`.
 */
export class ChunkTokenizer extends Context.Tag("blctx/ChunkTokenizer")<
  ChunkTokenizer,
  {
    readonly spans: (text: string) => Effect.Effect<ReadonlyArray<TokenSpan>, TokenizerError>
    /** The spans of many texts at once (the tokenizer runs them in parallel), in input order. */
    readonly spansBatch: (
      texts: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<TokenSpan>>, TokenizerError>
  }
>() {}
