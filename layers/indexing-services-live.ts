import * as NodePath from "node:path"
import { Effect, Layer, Option, Scope, SynchronizedRef } from "effect"
import type { TokenizerError } from "../src/chunking/chunk-tokenizer.js"
import { chunkSpans } from "../src/chunking/chunker.js"
import type { ConfigError } from "../src/config/config.js"
import { EmbeddingUnavailable } from "../src/embedding/embedding-unavailable.js"
import { InstalledModel, type ModelNotInstalled, type ModelNotVerified } from "../src/embedding/installed-model.js"
import { type ModelLoadError, ModelRuntime } from "../src/embedding/model-runtime.js"
import { redactUrlCredentials } from "../src/embedding/url-display.js"
import { type ImportServices, IndexingServices, wholeMessageChunking } from "../src/importer/import-services.js"
import { VectorIndex } from "../src/vectors/vector-index.js"
import { makeChunkTokenizer } from "./model-tokenizer-live.js"

type Services = Parameters<typeof ImportServices.of>[0]
const noModel: Services = { chunking: wholeMessageChunking, embedding: Option.none() }

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
 * every check (even after the daemon started) it is loaded once, with its tokenizer, and kept for
 * the daemon's life. While the record is missing, failed or stale, nothing is embedded: messages
 * are stored as whole chunks with vectors pending, queries are not embedded, and `unavailable`
 * says why; a repair job re-chunks and embeds them once the model passes.
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
            const embedder = yield* runtime.load(model.folder, model.spec).pipe(Scope.extend(scope))
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
                fingerprint: embedder.fingerprint,
                embed: (texts: ReadonlyArray<string>) => embedder.embed(texts, "passage"),
                embedQuery: (text: string) =>
                  Effect.map(
                    embedder.embed([text], "query"),
                    (vectors) => vectors[0] ?? new Float32Array(embedder.dims)
                  ),
                vectors
              })
            }
            yield* Effect.logInfo("embedding model loaded").pipe(
              Effect.annotateLogs({ model: embedder.fingerprint.label })
            )
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
