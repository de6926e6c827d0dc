import * as NodePath from "node:path"
import { Duration, Effect, Layer, Option, Scope, SynchronizedRef } from "effect"
import type { TokenizerError } from "../src/chunking/chunk-tokenizer.js"
import { chunkSpans } from "../src/chunking/chunker.js"
import type { ConfigError } from "../src/config/config.js"
import { type EmbedderShape, EmbedError } from "../src/embedding/embedder.js"
import { EmbeddingUnavailable } from "../src/embedding/embedding-unavailable.js"
import { makeIdleRecycler } from "../src/embedding/idle-recycler.js"
import { InstalledModel, type ModelNotInstalled, type ModelNotVerified } from "../src/embedding/installed-model.js"
import { ModelLoadError, ModelRuntime } from "../src/embedding/model-runtime.js"
import { redactUrlCredentials } from "../src/embedding/url-display.js"
import { type ImportServices, IndexingServices, wholeMessageChunking } from "../src/vectors/import-services.js"
import { VectorIndex } from "../src/vectors/vector-index.js"
import { makeChunkTokenizer } from "./model-tokenizer-live.js"

type Services = Parameters<typeof ImportServices.of>[0]
const noModel: Services = { chunking: wholeMessageChunking, embedding: Option.none() }

/**
 * How long the model sits unused after embedding passages (or a long query) before it is closed
 * and loaded again: ONNX Runtime keeps the memory of its largest run for the session's life
 * (~90 MiB with bge-small-en's size after indexing), and only a new session gives it back.
 * Loading takes about a second of one core; a query arriving then waits for it.
 */
export const MODEL_RELOAD_AFTER_IDLE = Duration.minutes(1)

/** A query this long (a pasted prompt, ~250 tokens and more) grows the session like a passage. */
export const LONG_QUERY_CHARS = 1000

/** Why the model cannot be used, typed so the index state words it and names the command. */
const unavailableOf = (
  error: ModelNotInstalled | ModelNotVerified | ConfigError | ModelLoadError | TokenizerError
): EmbeddingUnavailable => {
  switch (error._tag) {
    case "ModelNotInstalled":
      return EmbeddingUnavailable.NotInstalled({ detail: error.reason })
    case "ModelNotVerified":
      return EmbeddingUnavailable.NotVerified({ detail: error.reason })
    case "ConfigError":
      return EmbeddingUnavailable.BadConfig({
        detail: redactUrlCredentials(
          `${error.path}${error.field === "" ? "" : ` field "${error.field}"`}: ${error.message}`
        )
      })
    case "ModelLoadError":
      return EmbeddingUnavailable.Unloadable({ detail: error.message })
    case "TokenizerError":
      return EmbeddingUnavailable.Unloadable({ detail: `${error.path}: ${error.message}` })
  }
}

/**
 * The daemon's indexing services. The model is looked up at each job start (and each time the
 * index is judged): once the embedding_model step has installed it and recorded that it passed
 * every check (even after the daemon started) it is loaded, with its tokenizer, and kept for the
 * daemon's life, except that it is closed and loaded again (checked again first) a minute after
 * the last passage or long query it embedded, to give back ONNX Runtime's arena. While the
 * record is missing, failed or stale, nothing is embedded: messages are stored as whole chunks
 * with vectors pending, queries are not embedded, and `unavailable` says why; a repair job
 * re-chunks and embeds them once the model passes.
 */
export const IndexingServicesLive = Layer.scoped(
  IndexingServices,
  Effect.gen(function* () {
    const installed = yield* InstalledModel
    const runtime = yield* ModelRuntime
    const vectors = yield* VectorIndex
    const scope = yield* Effect.scope
    const loaded = yield* SynchronizedRef.make(Option.none<{ readonly key: string; readonly services: Services }>())
    const lastProblem = yield* SynchronizedRef.make(Option.none<EmbeddingUnavailable>())

    const current = SynchronizedRef.modifyEffect(loaded, (cached) =>
      installed.check().pipe(
        Effect.flatMap((model) => {
          if (Option.isSome(cached) && cached.value.key === model.fingerprint.key) {
            return Effect.succeed([cached.value.services, cached] as const)
          }
          return Effect.gen(function* () {
            const key = model.fingerprint.key
            // Loaded again only as installed and checked now, and only if it is still the same model.
            const load = Effect.flatMap(installed.check(), (now) =>
              now.fingerprint.key === key
                ? runtime.load(now.folder, now.spec)
                : Effect.fail(
                    new ModelLoadError({
                      folder: now.folder,
                      message: `the configured model changed from ${model.fingerprint.label} to ${now.fingerprint.label}`,
                      remediation: "The daemon loads the new model at the next job."
                    })
                  )
            )
            const recycler = yield* makeIdleRecycler(load, {
              idle: MODEL_RELOAD_AFTER_IDLE,
              name: "embedding model"
            }).pipe(Scope.extend(scope))
            const { fingerprint, dims } = yield* recycler.use(false, Effect.succeed)
            const embedWith = (grows: boolean, texts: ReadonlyArray<string>, kind: "passage" | "query") =>
              recycler
                .use(grows, (embedder: EmbedderShape) => embedder.embed(texts, kind))
                .pipe(
                  Effect.mapError((error) =>
                    error._tag === "EmbedError"
                      ? error
                      : new EmbedError({ folder: model.folder, message: unavailableOf(error).detail })
                  )
                )
            const tokenizer = yield* makeChunkTokenizer(NodePath.join(model.folder, "tokenizer.json"))
            const services: Services = {
              chunking: {
                tokenizer: `${model.spec.repo}@${model.spec.revision}`,
                chunkAll: (texts) =>
                  Effect.map(tokenizer.spansBatch(texts), (all) =>
                    all.map((spans, i) => chunkSpans(texts[i] ?? "", spans))
                  )
              },
              embedding: Option.some({
                fingerprint,
                embed: (texts: ReadonlyArray<string>) => embedWith(true, texts, "passage"),
                embedQuery: (text: string) =>
                  Effect.map(
                    embedWith(text.length > LONG_QUERY_CHARS, [text], "query"),
                    (vectors) => vectors[0] ?? new Float32Array(dims)
                  ),
                vectors
              })
            }
            yield* Effect.logInfo("embedding model loaded").pipe(Effect.annotateLogs({ model: fingerprint.label }))
            return [services, Option.some({ key: model.fingerprint.key, services })] as const
          })
        }),
        Effect.tap(() => SynchronizedRef.set(lastProblem, Option.none())),
        Effect.catchAll((error) =>
          SynchronizedRef.set(lastProblem, Option.some(unavailableOf(error))).pipe(
            Effect.as([noModel, cached] as const)
          )
        )
      )
    )

    // What the last `current` found: callers ask right after it, so the model is not checked twice.
    const unavailable = SynchronizedRef.get(lastProblem)
    return { current, unavailable }
  })
)
