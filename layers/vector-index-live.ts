import { SqliteClient } from "@effect/sql-sqlite-node"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { ConfigFile } from "../src/config/config-file.js"
import { ManifestStore } from "../src/ownership/manifest-store.js"
import { VectorIndex, VectorIndexError } from "../src/vectors/vector-index.js"
import { makeQdrantIndex } from "./qdrant-vector-index.js"
import { makeSqliteVectorIndex } from "./sqlite-vector-index.js"

/**
 * The vector index config.json selects: vector tables in the daemon's own database (the default),
 * or Qdrant with its API key read from the named environment variable and collections named
 * after this installation.
 */
export const VectorIndexLive = Layer.effect(
  VectorIndex,
  Effect.gen(function* () {
    const config = yield* (yield* ConfigFile).load()
    const store = config.vectorStore
    if (store.kind !== "qdrant") return yield* makeSqliteVectorIndex(yield* SqliteClient.SqliteClient)

    const problem = (message: string, remediation: string) =>
      new VectorIndexError({ store: store.url, message, remediation })
    let apiKey: string | undefined
    if (store.api_key_env !== undefined) {
      const name = store.api_key_env
      const value = yield* Config.option(Config.redacted(name)).pipe(Effect.orElseSucceed(() => Option.none()))
      if (Option.isNone(value)) {
        return yield* problem(
          `the environment variable ${name} (vector_store.api_key_env) is not set`,
          `Set ${name} to the Qdrant API key in the daemon's environment, or remove api_key_env from ${config.source}.`
        )
      }
      apiKey = Redacted.value(value.value)
    }
    const manifests = yield* ManifestStore
    const manifest = yield* manifests.read().pipe(Effect.orElseSucceed(() => Option.none()))
    if (Option.isNone(manifest)) {
      return yield* problem("no installation id: blctx is not installed", "Run: blctx install codex")
    }
    return yield* makeQdrantIndex({ url: store.url, apiKey, installationId: manifest.value.installation_id })
  })
)
