import { randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { ConfigFile } from "../src/config/config-file.js"
import { InstallationId } from "../src/domain/installation-id.js"
import { DEFAULT_MODEL_SPEC, ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { Manifest } from "../src/ownership/manifest.js"
import { ManifestStore } from "../src/ownership/manifest-store.js"
import { Paths, resolvePaths } from "../src/paths/paths.js"
import { ChunkId, VectorIndex } from "../src/vectors/vector-index.js"
import { NodeSafeFsLive } from "./node-safe-fs.js"
import { VectorIndexLive } from "./vector-index-live.js"

const fp = fingerprintOf(new ModelSpec({ ...DEFAULT_MODEL_SPEC, repo: "blctx-test/two", dims: 2 }))

const makeHome = (config: unknown) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const home = mkdtempSync(NodePath.join(tmpdir(), "blctx-vector-live-"))
      const paths = resolvePaths({ home })
      for (const dir of [paths.configDir, paths.dataDir, paths.stateDir]) mkdirSync(dir, { recursive: true })
      writeFileSync(NodePath.join(paths.configDir, "config.json"), JSON.stringify(config))
      const base = Layer.merge(NodeSafeFsLive, Layer.succeed(Paths, Paths.make(paths)))
      const layer = VectorIndexLive.pipe(
        Layer.provide(
          Layer.mergeAll(ConfigFile.Default, ManifestStore.Default, SqliteClient.layer({ filename: paths.database }))
        ),
        Layer.provide(base)
      )
      return { home, paths, base, layer }
    }),
    ({ home }) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
  )

describe("VectorIndexLive selects the store config.json names", () => {
  it.scoped("uses the vector tables of the database by default", () =>
    Effect.gen(function* () {
      const h = yield* makeHome({})
      const index = Context.get(yield* Layer.build(h.layer), VectorIndex)
      yield* index.upsert(fp, [{ id: ChunkId.make(3), vector: Float32Array.from([1, 0]) }])
      expect(yield* index.listIds(fp)).toEqual([3])
    })
  )

  it.scoped("refuses Qdrant when the API key variable is not set, naming it", () =>
    Effect.gen(function* () {
      const h = yield* makeHome({
        vector_store: { kind: "qdrant", url: "http://127.0.0.1:9", api_key_env: "BLCTX_TEST_UNSET_KEY" }
      })
      const error = yield* Effect.flip(Effect.scoped(Layer.build(h.layer))).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
      )
      expect(error._tag).toBe("VectorIndexError")
      expect(error.message).toBe("the environment variable BLCTX_TEST_UNSET_KEY (vector_store.api_key_env) is not set")
    })
  )

  it.scoped("builds a Qdrant index for this installation whose failures name the server", () =>
    Effect.gen(function* () {
      const h = yield* makeHome({ vector_store: { kind: "qdrant", url: "http://127.0.0.1:9", api_key_env: "QKEY" } })
      const t = new Date().toISOString()
      yield* Effect.flatMap(ManifestStore, (m) =>
        m.write(
          new Manifest({
            version: 1,
            installation_id: InstallationId.make(randomUUID()),
            state: "active",
            owned_files: [],
            created_directories: [],
            node: process.execPath,
            cli: process.execPath,
            created_at: t,
            updated_at: t,
            choices: {}
          })
        )
      ).pipe(Effect.provide(ManifestStore.Default.pipe(Layer.provide(h.base))))
      const index = Context.get(
        yield* Layer.build(h.layer).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["QKEY", "secret"]])))
        ),
        VectorIndex
      )
      const error = yield* Effect.flip(index.count(fp))
      expect(error.store).toBe("http://127.0.0.1:9")
      expect(error.remediation).toContain("Check that Qdrant answers at http://127.0.0.1:9")
    })
  )
})
