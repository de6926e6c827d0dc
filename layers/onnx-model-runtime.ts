import { readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { AddedToken, type Encoding, Tokenizer } from "@anush008/tokenizers"
import { Effect, Layer, Schema } from "effect"
import * as ort from "onnxruntime-node"
import { type ModelSpec, withPrefix } from "../src/domain/model-spec.js"
import { type EmbedderShape, EmbedError, type EmbedKind } from "../src/embedding/embedder.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { ModelLoadError, ModelRuntime } from "../src/embedding/model-runtime.js"
import { batchesByLength, clsPool, padBatch } from "../src/embedding/pooling.js"

export interface OnnxOptions {
  /** Texts per ONNX run (default 32). */
  readonly batchSize?: number
  /**
   * Pad every batch to at least this many tokens. Unset (the default) pads each batch only to
   * its longest input; the conformance test sets it to compare with FastEmbed's fixed padding.
   */
  readonly padTo?: number
  /**
   * Padded tokens per ONNX run (rows × the batch's longest input; default
   * `DEFAULT_MAX_BATCH_TOKENS`). The encoder's activations grow with it (attention with rows ×
   * length²), so it bounds peak memory: 32 chunks of 384 tokens in one run take ~1.1 GiB.
   */
  readonly maxBatchTokens?: number
  /** ONNX Runtime's intra-op threads. Unset (the product): ONNX Runtime's default, one per core. */
  readonly intraOpNumThreads?: number
}

/**
 * Two 384-token chunks per run, or 16 texts of up to 64 tokens. With bge-small-en's size, each
 * 384-token row takes ~36 MiB of ONNX Runtime arena (measured here: 1 row +31 MiB, 2 rows +71,
 * 5 rows +179), and the arena keeps its peak for the session's life; on a CPU more rows of that
 * length add no throughput (the attention's rows × length² dominates), so the cap costs little
 * speed and bounds the daemon's memory while it indexes. Each run also blocks the event loop
 * (onnxruntime-node runs synchronously), so shorter runs keep the daemon answering.
 */
export const DEFAULT_MAX_BATCH_TOKENS = 1024

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

const ModelConfig = Schema.Struct({ pad_token_id: Schema.optional(Schema.Int) })
const TokenizerConfig = Schema.Struct({ model_max_length: Schema.optional(Schema.Number) })
const SpecialToken = Schema.Union(
  Schema.String,
  Schema.Struct({
    content: Schema.String,
    single_word: Schema.optional(Schema.Boolean),
    lstrip: Schema.optional(Schema.Boolean),
    rstrip: Schema.optional(Schema.Boolean),
    normalized: Schema.optional(Schema.Boolean)
  })
)
const SpecialTokensMap = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const readJson = <A, I>(folder: string, name: string, schema: Schema.Schema<A, I>) =>
  Effect.try({
    try: () => Schema.decodeUnknownSync(schema)(JSON.parse(readFileSync(NodePath.join(folder, name), "utf8"))),
    catch: (error) =>
      new ModelLoadError({
        folder,
        message: `${name}: ${message(error)}`,
        remediation: "Run: blctx install codex --step embedding_model"
      })
  })

/**
 * Loads the tokenizer exactly as FastEmbed does (tokenizer.json, truncation at the model's
 * maximum, the special tokens of special_tokens_map.json) but without padding: padding is done
 * per batch, to the batch's longest input.
 */
export const loadTokenizer = (folder: string, maxTokens: number) =>
  Effect.gen(function* () {
    const tokenizerConfig = yield* readJson(folder, "tokenizer_config.json", TokenizerConfig)
    const specialTokens = yield* readJson(folder, "special_tokens_map.json", SpecialTokensMap)
    return yield* Effect.try({
      try: () => {
        const tokenizer = Tokenizer.fromFile(NodePath.join(folder, "tokenizer.json"))
        tokenizer.setTruncation(Math.min(maxTokens, tokenizerConfig.model_max_length ?? maxTokens))
        for (const raw of Object.values(specialTokens)) {
          const token = Schema.decodeUnknownOption(SpecialToken)(raw)
          if (token._tag === "None") continue
          const t = token.value
          if (typeof t === "string") tokenizer.addSpecialTokens([t])
          else
            tokenizer.addAddedTokens([
              new AddedToken(t.content, true, {
                ...(t.single_word === undefined ? {} : { singleWord: t.single_word }),
                ...(t.lstrip === undefined ? {} : { leftStrip: t.lstrip }),
                ...(t.rstrip === undefined ? {} : { rightStrip: t.rstrip }),
                ...(t.normalized === undefined ? {} : { normalized: t.normalized })
              })
            ])
        }
        return tokenizer
      },
      catch: (error) =>
        new ModelLoadError({
          folder,
          message: `tokenizer.json: ${message(error)}`,
          remediation: "Run: blctx install codex --step embedding_model"
        })
    })
  })

/** An ONNX Runtime (CPU) embedder over a FastEmbed-style model folder: CLS pooling, L2 normalisation. */
export const loadOnnxEmbedder = (folder: string, spec: ModelSpec, options: OnnxOptions = {}) =>
  Effect.gen(function* () {
    const config = yield* readJson(folder, "config.json", ModelConfig)
    const padId = config.pad_token_id ?? 0
    const tokenizer = yield* loadTokenizer(folder, spec.max_tokens)
    const session = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          ort.InferenceSession.create(NodePath.join(folder, spec.onnx_file), {
            executionProviders: ["cpu"],
            graphOptimizationLevel: "all",
            // ONNX Runtime otherwise keeps a second, pre-packed copy of every MatMul weight: about
            // 89 MiB for bge-small-en, for about 5% of speed at 384 tokens.
            extra: { session: { disable_prepacking: "1" } },
            // ONNX Runtime's arena keeps the largest run's tensors for the session's life (~80 MiB
            // after indexing with bge-small-en's size), but without it every run maps fresh pages:
            // indexing through the daemon went from 14.0 to 8.1 chunks/s (`npm run bench -- importer`).
            enableCpuMemArena: true,
            ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads })
          }),
        catch: (error) =>
          new ModelLoadError({
            folder,
            message: `${spec.onnx_file}: ${message(error)}`,
            remediation: "Run: blctx install codex --step embedding_model"
          })
      }),
      (s) => Effect.promise(() => s.release())
    )
    const outputName = session.outputNames.includes("last_hidden_state")
      ? "last_hidden_state"
      : (session.outputNames[0] ?? "last_hidden_state")
    const wantsTypeIds = session.inputNames.includes("token_type_ids")
    const batchSize = options.batchSize ?? 32
    const maxBatchTokens = options.maxBatchTokens ?? DEFAULT_MAX_BATCH_TOKENS

    const runBatch = async (encodings: ReadonlyArray<Encoding>): Promise<Array<Float32Array>> => {
      const batch = padBatch(
        encodings.map((e) => ({ ids: e.getIds(), typeIds: e.getTypeIds() })),
        padId,
        options.padTo
      )
      const dims = [batch.rows, batch.length]
      const feeds: Record<string, ort.Tensor> = {
        input_ids: new ort.Tensor("int64", batch.inputIds, dims),
        attention_mask: new ort.Tensor("int64", batch.attentionMask, dims)
      }
      if (wantsTypeIds) feeds.token_type_ids = new ort.Tensor("int64", batch.typeIds, dims)
      const output = (await session.run(feeds))[outputName]
      if (output === undefined || output.dims.length !== 3) throw new Error(`the model has no 3-d output ${outputName}`)
      const [rows, tokens, hidden] = output.dims as [number, number, number]
      if (hidden !== spec.dims) throw new Error(`the model outputs ${hidden} dimensions; the spec says ${spec.dims}`)
      return clsPool(output.data as Float32Array, rows, tokens, hidden)
    }

    /**
     * Tokenizes everything, then runs batches of similar length (each padded only to its own
     * longest input, at most `batchSize` texts and `maxBatchTokens` padded tokens) and puts the
     * vectors back in input order. With BERT the grouping changes nothing but speed and memory,
     * because padding is masked.
     */
    const embed = Effect.fn("Embedder.embed")(function* (texts: ReadonlyArray<string>, kind: EmbedKind) {
      const failed = (error: unknown) => new EmbedError({ folder, message: message(error) })
      const encodings = yield* Effect.tryPromise({
        try: () => Promise.all(texts.map((t) => tokenizer.encode(withPrefix(spec, kind, t)))),
        catch: failed
      })
      const out = new Array<Float32Array>(texts.length)
      for (const indices of batchesByLength(
        encodings.map((e) => e.getLength()),
        batchSize,
        maxBatchTokens
      )) {
        const vectors = yield* Effect.tryPromise({
          try: () => runBatch(indices.map((i) => encodings[i] as Encoding)),
          catch: failed
        })
        indices.forEach((index, j) => {
          const v = vectors[j]
          if (v !== undefined) out[index] = v
        })
      }
      return out as ReadonlyArray<Float32Array>
    })

    return { fingerprint: fingerprintOf(spec), dims: spec.dims, embed } satisfies EmbedderShape
  })

/** The live model runtime: ONNX Runtime on the CPU. */
export const OnnxModelRuntimeLive = Layer.succeed(ModelRuntime, {
  load: (folder, spec) => loadOnnxEmbedder(folder, spec)
})
