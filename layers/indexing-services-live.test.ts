import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { ConfigFile } from "../src/config/config-file.js"
import { EmbeddingUnavailable } from "../src/embedding/embedding-unavailable.js"
import { InstalledModel } from "../src/embedding/installed-model.js"
import { activeModelFolder } from "../src/embedding/model-location.js"
import { ModelRuntime } from "../src/embedding/model-runtime.js"
import { IndexingServices } from "../src/importer/import-services.js"
import { Paths, resolvePaths } from "../src/paths/paths.js"
import { VectorIndex } from "../src/vectors/vector-index.js"
import { FakeModelRuntimeLive } from "./fake-model.js"
import { IndexingServicesLive } from "./indexing-services-live.js"
import { testModelData, tinyModelConfig, tinyModelFiles, tinyModelSources, tinyModelSpec } from "./model-test-folder.js"
import { writeVerification } from "./model-test-verification.js"
import { NodeSafeFsLive } from "./node-safe-fs.js"

const data = testModelData()

/** Never reached by these tests: nothing is embedded or searched. */
const noVectors = Layer.succeed(VectorIndex, {
  upsert: () => Effect.die("unused"),
  remove: () => Effect.die("unused"),
  search: () => Effect.die("unused"),
  count: () => Effect.die("unused"),
  listIds: () => Effect.die("unused"),
  fingerprints: () => Effect.die("unused")
})

/** A home with the tiny model's files in place (as the step leaves them) and the daemon's indexing services. */
const makeHome = Effect.acquireRelease(
  Effect.sync(() => {
    const home = mkdtempSync(NodePath.join(tmpdir(), "blctx-indexing-services-"))
    const paths = resolvePaths({ home })
    mkdirSync(paths.configDir, { recursive: true })
    writeFileSync(
      NodePath.join(paths.configDir, "config.json"),
      JSON.stringify(tinyModelConfig(data ?? "", "http://127.0.0.1:9"))
    )
    const spec = tinyModelSpec(tinyModelFiles(data ?? ""), "http://127.0.0.1:9")
    const folder = activeModelFolder(paths.cacheDir, spec)
    mkdirSync(folder, { recursive: true })
    for (const { name, source } of tinyModelSources(data ?? "")) copyFileSync(source, NodePath.join(folder, name))
    const loads: Array<string> = []
    const runtime = Layer.effect(
      ModelRuntime,
      Effect.map(ModelRuntime, (fake) =>
        ModelRuntime.of({
          load: (f, s) =>
            Effect.zipRight(
              Effect.sync(() => loads.push(f)),
              fake.load(f, s)
            )
        })
      )
    ).pipe(Layer.provide(FakeModelRuntimeLive))
    const layer = IndexingServicesLive.pipe(
      Layer.provide(InstalledModel.Default),
      Layer.provideMerge(runtime),
      Layer.provide(noVectors),
      Layer.provide(ConfigFile.Default),
      Layer.provide(Layer.merge(NodeSafeFsLive, Layer.succeed(Paths, Paths.make(paths))))
    )
    return { home, folder, spec, loads, layer }
  }),
  ({ home }) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
)

const state = Effect.gen(function* () {
  const indexing = yield* IndexingServices
  const services = yield* indexing.current
  return { embedding: Option.isSome(services.embedding), unavailable: yield* indexing.unavailable }
})

describe("IndexingServicesLive: the daemon embeds only with a model that passed every check (BLCTX_TEST_MODEL_DATA)", () => {
  it.scoped.skipIf(!data)("indexes without vectors while the sanity check has failed, saying what failed", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      writeVerification(h.folder, h.spec, "ranked-retrieval check failed: passage 1 ranked first, expected 0")
      const before = yield* state.pipe(Effect.provide(h.layer))
      expect(before).toEqual({
        embedding: false,
        unavailable: Option.some(
          EmbeddingUnavailable.NotVerified({
            detail: "ranked-retrieval check failed: passage 1 ranked first, expected 0"
          })
        )
      })
      expect(h.loads).toEqual([])
    })
  )

  it.scoped.skipIf(!data)("loads the model, when it appears verified, on the next look", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      const context = yield* Layer.build(h.layer)
      const look = state.pipe(Effect.provide(context))
      expect((yield* look).unavailable).toEqual(
        Option.some(EmbeddingUnavailable.NotVerified({ detail: `no check of ${h.folder} is recorded` }))
      )
      writeVerification(h.folder, h.spec)
      expect(yield* look).toEqual({ embedding: true, unavailable: Option.none() })
      expect(h.loads).toEqual([h.folder])
    })
  )
})
