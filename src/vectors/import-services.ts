import { Context, Effect, type Option } from "effect"
import type { TokenizerError } from "../chunking/chunk-tokenizer.js"
import type { EmbedError } from "../embedding/embedder.js"
import type { EmbeddingUnavailable } from "../embedding/embedding-unavailable.js"
import type { ModelFingerprint } from "../embedding/fingerprint.js"
import type { VectorIndexShape } from "./vector-index.js"

/** A piece of a message to index: characters `[start, end)` of the stored (redacted) text. */
export interface TextPiece {
  readonly start: number
  readonly end: number
  readonly text: string
}

/** How messages are cut into chunks. `tokenizer` names the boundaries, stored with each chunk. */
export interface ImportChunking {
  readonly tokenizer: string
  /** The chunks of each text, in input order (one call per batch: tokenizers run batches in parallel). */
  readonly chunkAll: (
    texts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<TextPiece>>, TokenizerError>
}

/** A verified model and the vector index on the writer's connection. */
export interface ImportEmbedding {
  readonly fingerprint: ModelFingerprint
  /** Passages (chunks), with the model's passage prefix. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbedError>
  /** Search queries, with the model's query prefix. */
  readonly embedQuery: (text: string) => Effect.Effect<Float32Array, EmbedError>
  readonly vectors: VectorIndexShape
}

/**
 * What the importer works with besides SQLite. Without a verified model, `embedding` is none:
 * messages and chunks are stored and searchable lexically, and their vectors stay pending.
 */
export class ImportServices extends Context.Tag("blctx/ImportServices")<
  ImportServices,
  {
    readonly chunking: ImportChunking
    readonly embedding: Option.Option<ImportEmbedding>
  }
>() {}

/** Chunking when no tokenizer is installed yet: one chunk per message, re-chunked by repair later. */
export const WHOLE_MESSAGE_TOKENIZER = "whole-message"

export const wholeMessageChunking: ImportChunking = {
  tokenizer: WHOLE_MESSAGE_TOKENIZER,
  chunkAll: (texts) =>
    Effect.succeed(texts.map((text) => (text.length === 0 ? [] : [{ start: 0, end: text.length, text }])))
}

/**
 * The daemon's source of ImportServices for each job: the model may be installed (or replaced)
 * while the daemon runs, so every job asks for the current state when it starts.
 */
export class IndexingServices extends Context.Tag("blctx/IndexingServices")<
  IndexingServices,
  {
    readonly current: Effect.Effect<Context.Tag.Service<ImportServices>>
    /**
     * Why vectors were not available at the last `current` (no model, one not verified, a load
     * failure), or none when they were: ask right after `current`.
     */
    readonly unavailable: Effect.Effect<Option.Option<EmbeddingUnavailable>>
  }
>() {}
