import { Data } from "effect"

/**
 * Why the daemon cannot embed (and search stays lexical). Typed, so the index state words the
 * reason and names what to run for each case; `detail` says what exactly is wrong.
 */
export type EmbeddingUnavailable = Data.TaggedEnum<{
  /** A file of the configured model is missing or not the pinned size. */
  NotInstalled: { readonly detail: string }
  /** The files are there, but the embedding_model step has not recorded that every check passed. */
  NotVerified: { readonly detail: string }
  /** The verified model could not be opened (ONNX Runtime or the tokenizer refused it). */
  Unloadable: { readonly detail: string }
  /** config.json cannot be read, so no model is known. */
  BadConfig: { readonly detail: string }
  /** The configured vector index could not be opened. */
  NoVectorIndex: { readonly detail: string }
}>

export const EmbeddingUnavailable = Data.taggedEnum<EmbeddingUnavailable>()
