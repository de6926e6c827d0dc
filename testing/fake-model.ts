import { createHash } from "node:crypto"
import { Effect, Layer } from "effect"
import { DEFAULT_MODEL_SPEC, ModelSpec } from "../src/domain/model-spec.js"
import { Embedder, type EmbedderShape } from "../src/embedding/embedder.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { ModelRuntime } from "../src/embedding/model-runtime.js"
import { l2Normalize } from "../src/embedding/pooling.js"

/** The spec the fake model claims: its own repo name, so its fingerprint never equals a real model's. */
export const fakeModelSpec = (dims = 384) =>
  new ModelSpec({ ...DEFAULT_MODEL_SPEC, repo: "blctx-test/fake-model", revision: "fake", dims })

export interface FakeEmbedderStats {
  /** Texts embedded so far. */
  texts: number
  /** Calls to `embed`. */
  calls: number
}

/**
 * A deterministic stand-in for the model, for tests of everything around it: each lower-cased
 * word adds ±1 to a bucket chosen by its hash, and the sum is L2-normalised. Texts sharing
 * words are similar; the same text always gives the same vector; queries and passages are
 * embedded alike. Fast, no files.
 */
export const makeFakeEmbedder = (spec: ModelSpec = fakeModelSpec()) => {
  const stats: FakeEmbedderStats = { texts: 0, calls: 0 }
  const vectorOf = (text: string) => {
    const v = new Float32Array(spec.dims)
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const h = createHash("sha256").update(word).digest()
      const bucket = h.readUInt32BE(0) % spec.dims
      v[bucket] = (v[bucket] ?? 0) + (h[4] !== undefined && h[4] & 1 ? 1 : -1)
    }
    // An empty text still gets a valid unit vector.
    if (v.every((x) => x === 0)) v[0] = 1
    return l2Normalize(v)
  }
  const embedder: EmbedderShape = {
    fingerprint: fingerprintOf(spec),
    dims: spec.dims,
    embed: (texts) =>
      Effect.sync(() => {
        stats.calls++
        stats.texts += texts.length
        return texts.map(vectorOf)
      })
  }
  return { embedder, stats }
}

/** `Embedder` backed by the fake model. */
export const FakeEmbedderLive = (spec: ModelSpec = fakeModelSpec()) =>
  Layer.succeed(Embedder, makeFakeEmbedder(spec).embedder)

/** A `ModelRuntime` that "loads" the fake model for any folder, with the spec's dimension. */
export const FakeModelRuntimeLive = Layer.succeed(ModelRuntime, {
  load: (_folder, spec) => Effect.succeed(makeFakeEmbedder(spec).embedder)
})
