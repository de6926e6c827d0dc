import { Context, Data, type Effect } from "effect"
import type { ModelFingerprint } from "./fingerprint.js"

/** Queries and passages are embedded with different prefixes (the spec's prefix policy). */
export type EmbedKind = "query" | "passage"

/** Inference failed on texts that were accepted; carries the model folder for the person reading it. */
export class EmbedError extends Data.TaggedError("EmbedError")<{
  readonly folder: string
  readonly message: string
}> {}

export interface EmbedderShape {
  readonly fingerprint: ModelFingerprint
  readonly dims: number
  /** One unit-length vector of `dims` floats per text, in input order. */
  readonly embed: (
    texts: ReadonlyArray<string>,
    kind: EmbedKind
  ) => Effect.Effect<ReadonlyArray<Float32Array>, EmbedError>
}

/** The local embedding model. Live: ONNX Runtime on the CPU; fake: deterministic vectors for tests. */
export class Embedder extends Context.Tag("blctx/Embedder")<Embedder, EmbedderShape>() {}
