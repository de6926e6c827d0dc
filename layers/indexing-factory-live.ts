import { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, Effect, Layer, Option } from "effect"
import { ConfigFile } from "../src/config/config-file.js"
import { IndexingFactory } from "../src/daemon/indexing-factory.js"
import { EmbeddingUnavailable } from "../src/embedding/embedding-unavailable.js"
import { InstalledModel } from "../src/embedding/installed-model.js"
import type { ModelRuntime } from "../src/embedding/model-runtime.js"
import type { ManifestStore } from "../src/ownership/manifest-store.js"
import { IndexingServices, wholeMessageChunking } from "../src/vectors/import-services.js"
import { IndexingServicesLive } from "./indexing-services-live.js"
import { OnnxModelRuntimeLive } from "./onnx-model-runtime.js"
import { VectorIndexLive } from "./vector-index-live.js"

/**
 * The live factory: the configured vector index on the writer connection and the installed
 * model on ONNX Runtime. A broken configuration does not stop the daemon: it indexes lexically
 * and says why in `context_status`.
 */
export const IndexingFactoryLive = Layer.effect(
  IndexingFactory,
  Effect.gen(function* () {
    const context = yield* Effect.context<ConfigFile | InstalledModel | ManifestStore | ModelRuntime>()
    return {
      make: (writer) =>
        Effect.gen(function* () {
          const config = yield* Effect.either(Effect.flatMap(ConfigFile, (c) => c.load()))
          const built = yield* Layer.build(
            IndexingServicesLive.pipe(
              Layer.provide(VectorIndexLive),
              Layer.provide(Layer.succeed(SqliteClient.SqliteClient, writer))
            )
          ).pipe(Effect.either)
          if (built._tag === "Left") {
            const reason = `the vector index could not be opened: ${built.left.message}`
            yield* Effect.logError("indexing without vectors").pipe(Effect.annotateLogs({ reason }))
            const why = EmbeddingUnavailable.NoVectorIndex({ detail: built.left.message })
            return {
              indexing: {
                current: Effect.succeed({ chunking: wholeMessageChunking, embedding: Option.none() }),
                unavailable: Effect.succeed(Option.some(why))
              },
              embeddedVectors: false
            }
          }
          return {
            indexing: Context.get(built.right, IndexingServices),
            embeddedVectors: config._tag === "Right" && config.right.vectorStore.kind !== "qdrant"
          }
        }).pipe(Effect.provide(context))
    }
  })
).pipe(
  Layer.provide(InstalledModel.Default),
  Layer.provideMerge(ConfigFile.Default),
  Layer.provideMerge(OnnxModelRuntimeLive)
)
