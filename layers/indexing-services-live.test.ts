import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, Queue, TestClock } from "effect"
import { ConfigFile } from "../src/config/config-file.js"
import { EmbedError } from "../src/embedding/embedder.js"
import { EmbeddingUnavailable } from "../src/embedding/embedding-unavailable.js"
import { InstalledModel } from "../src/embedding/installed-model.js"
import { activeModelFolder } from "../src/embedding/model-location.js"
import { ModelRuntime } from "../src/embedding/model-runtime.js"
import { Paths, resolvePaths } from "../src/paths/paths.js"
import { IndexingServices } from "../src/vectors/import-services.js"
import { VectorIndex } from "../src/vectors/vector-index.js"
import { FakeModelRuntimeLive } from "../testing/fake-model.js"
import {
  testModelData,
  tinyModelConfig,
  tinyModelFiles,
  tinyModelSources,
  tinyModelSpec
} from "../testing/model-test-folder.js"
import { writeVerification } from "../testing/model-test-verification.js"
import { IndexingServicesLive, LONG_QUERY_CHARS, MODEL_RELOAD_AFTER_IDLE } from "./indexing-services-live.js"
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
    // Every load and release of the model, in order, for tests that wait on them.
    const lifecycle = Effect.runSync(Queue.unbounded<"load" | "release">())
    const runtime = Layer.effect(
      ModelRuntime,
      Effect.map(ModelRuntime, (fake) =>
        ModelRuntime.of({
          load: (f, s) =>
            Effect.zipRight(
              Effect.sync(() => loads.push(f)),
              fake.load(f, s).pipe(
                Effect.tap(() => Queue.offer(lifecycle, "load")),
                Effect.tap(() => Effect.addFinalizer(() => Queue.offer(lifecycle, "release")))
              )
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
    return { home, folder, spec, loads, lifecycle, layer }
  }),
  ({ home }) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
)

/** Lets forked fibers run up to their next sleep or wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

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

  it.scoped.skipIf(!data)(
    "loads the model again once it sits idle after embedding passages or a long query, never for short queries",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHome
        writeVerification(h.folder, h.spec)
        const context = yield* Layer.build(h.layer)
        const services = yield* Effect.flatMap(IndexingServices, (i) => i.current).pipe(Effect.provide(context))
        const embedding = Option.getOrThrow(services.embedding)
        expect(yield* Queue.takeAll(h.lifecycle)).toHaveLength(1)
        const query = yield* embedding.embedQuery("what did we decide about the deployment")
        yield* TestClock.adjust(Duration.sum(MODEL_RELOAD_AFTER_IDLE, "1 hour"))
        yield* settle
        expect(yield* Queue.size(h.lifecycle)).toBe(0)

        const passages = yield* embedding.embed(["the deployment goes through the staging cluster first"])
        yield* settle
        yield* TestClock.adjust(Duration.subtract(MODEL_RELOAD_AFTER_IDLE, "1 second"))
        yield* settle
        expect(yield* Queue.size(h.lifecycle)).toBe(0)
        yield* TestClock.adjust("1 second")
        // Released before it is loaded again: the two never hold their memory at once.
        expect([yield* Queue.take(h.lifecycle), yield* Queue.take(h.lifecycle)]).toEqual(["release", "load"])
        expect(h.loads).toEqual([h.folder, h.folder])
        // The same model, so the same vectors.
        expect([...(yield* embedding.embedQuery("what did we decide about the deployment"))]).toEqual([...query])
        expect(
          (yield* embedding.embed(["the deployment goes through the staging cluster first"])).map((v) => [...v])
        ).toEqual(passages.map((v) => [...v]))
        yield* TestClock.adjust(MODEL_RELOAD_AFTER_IDLE)
        expect([yield* Queue.take(h.lifecycle), yield* Queue.take(h.lifecycle)]).toEqual(["release", "load"])

        yield* embedding.embedQuery("x".repeat(LONG_QUERY_CHARS + 1))
        yield* settle
        yield* TestClock.adjust(MODEL_RELOAD_AFTER_IDLE)
        expect([yield* Queue.take(h.lifecycle), yield* Queue.take(h.lifecycle)]).toEqual(["release", "load"])
      })
  )

  it.scoped.skipIf(!data)(
    "does not load again a model whose check no longer passes: embedding fails saying why, and the next look reports it",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHome
        writeVerification(h.folder, h.spec)
        const context = yield* Layer.build(h.layer)
        const indexing = Context.get(context, IndexingServices)
        const embedding = Option.getOrThrow((yield* indexing.current).embedding)
        yield* embedding.embed(["a passage"])
        writeVerification(h.folder, h.spec, "ranked-retrieval check failed: passage 1 ranked first, expected 0")
        yield* settle
        yield* TestClock.adjust(MODEL_RELOAD_AFTER_IDLE)
        expect(yield* Queue.take(h.lifecycle)).toBe("load")
        expect(yield* Queue.take(h.lifecycle)).toBe("release")
        const failed = yield* Effect.flip(embedding.embed(["another passage"]))
        expect(failed).toEqual(
          new EmbedError({
            folder: h.folder,
            message: "ranked-retrieval check failed: passage 1 ranked first, expected 0"
          })
        )
        expect(yield* Queue.size(h.lifecycle)).toBe(0)
        yield* indexing.current
        expect(yield* indexing.unavailable).toEqual(
          Option.some(
            EmbeddingUnavailable.NotVerified({
              detail: "ranked-retrieval check failed: passage 1 ranked first, expected 0"
            })
          )
        )
      })
  )
})
