import * as NodePath from "node:path"
import { Effect, Layer, Option, Scope, SynchronizedRef } from "effect"
import { chunkSpans } from "../src/chunking/chunker.js"
import { InstalledModel } from "../src/embedding/installed-model.js"
import { ModelRuntime } from "../src/embedding/model-runtime.js"
import { type ImportServices, IndexingServices, wholeMessageChunking } from "../src/importer/import-services.js"
import { VectorIndex } from "../src/vectors/vector-index.js"
import { makeChunkTokenizer } from "./model-tokenizer-live.js"

type Services = Parameters<typeof ImportServices.of>[0]
const noModel: Services = { chunking: wholeMessageChunking, embedding: Option.none() }

const reasonOf = (error: { readonly _tag: string; readonly message?: string; readonly reason?: string }) =>
  error.reason ?? error.message ?? error._tag

/**
 * The daemon's indexing services. The model is looked up at each job start: when the
 * embedding_model step has installed it (even after the daemon started) it is loaded once,
 * with its tokenizer, and kept for the daemon's life; until then messages are stored as whole
 * chunks with vectors pending, and a repair job re-chunks and embeds them later.
 */
export const IndexingServicesLive = Layer.scoped(
  IndexingServices,
  Effect.gen(function* () {
    const installed = yield* InstalledModel
    const runtime = yield* ModelRuntime
    const vectors = yield* VectorIndex
    const scope = yield* Effect.scope
    const loaded = yield* SynchronizedRef.make(Option.none<{ readonly key: string; readonly services: Services }>())
    const lastProblem = yield* SynchronizedRef.make(Option.none<string>())

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
          SynchronizedRef.set(lastProblem, Option.some(reasonOf(error))).pipe(Effect.as([noModel, cached] as const))
        )
      )
    )

    const unavailable = Effect.zipRight(current, SynchronizedRef.get(lastProblem))
    return { current, unavailable }
  })
)
