import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { ConfigFile } from "../src/config/config-file.js"
import { Embedder } from "../src/embedding/embedder.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { activeModelFolder } from "../src/embedding/model-location.js"
import { Paths, resolvePaths } from "../src/paths/paths.js"
import {
  testModelData,
  tinyModelConfig,
  tinyModelFiles,
  tinyModelSources,
  tinyModelSpec
} from "../testing/model-test-folder.js"
import { writeVerification } from "../testing/model-test-verification.js"
import { NodeSafeFsLive } from "./node-safe-fs.js"
import { EmbedderLive } from "./onnx-embedder-live.js"

const data = testModelData()

/** A home whose config names the tiny model; `install` copies its files where the step would put them. */
const makeHome = Effect.acquireRelease(
  Effect.sync(() => {
    const home = mkdtempSync(NodePath.join(tmpdir(), "blctx-embedder-"))
    const paths = resolvePaths({ home })
    mkdirSync(paths.configDir, { recursive: true })
    writeFileSync(
      NodePath.join(paths.configDir, "config.json"),
      JSON.stringify(tinyModelConfig(data ?? "", "http://127.0.0.1:9"))
    )
    const spec = tinyModelSpec(tinyModelFiles(data ?? ""), "http://127.0.0.1:9")
    const folder = activeModelFolder(paths.cacheDir, spec)
    /** Puts the files where the step would, and (unless told otherwise) the record of its passed checks. */
    const install = (verified = true) => {
      mkdirSync(folder, { recursive: true })
      for (const { name, source } of tinyModelSources(data ?? "")) copyFileSync(source, NodePath.join(folder, name))
      if (verified) writeVerification(folder, spec)
    }
    const layer = EmbedderLive.pipe(
      Layer.provide(ConfigFile.Default),
      Layer.provideMerge(Layer.merge(NodeSafeFsLive, Layer.succeed(Paths, Paths.make(paths))))
    )
    return { home, folder, install, layer }
  }),
  ({ home }) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
)

describe("EmbedderLive: the installed model of the configuration (BLCTX_TEST_MODEL_DATA)", () => {
  it.scoped.skipIf(!data)("fails with ModelNotInstalled, naming the folder, when the step has not run", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      const error = yield* Effect.flip(Effect.scoped(Layer.build(h.layer)))
      expect(error._tag).toBe("ModelNotInstalled")
      if (error._tag !== "ModelNotInstalled") return
      expect(error.folder).toBe(h.folder)
      expect(error.remediation).toBe("Run: blctx install codex --step embedding_model")
    })
  )

  it.scoped.skipIf(!data)(
    "fails with ModelNotVerified when the files are there but their checks are not recorded",
    () =>
      Effect.gen(function* () {
        const h = yield* makeHome
        h.install(false)
        const error = yield* Effect.flip(Effect.scoped(Layer.build(h.layer)))
        expect(error._tag).toBe("ModelNotVerified")
        if (error._tag !== "ModelNotVerified") return
        expect(error.reason).toBe(`no check of ${h.folder} is recorded`)
        expect(error.remediation).toBe("Run: blctx install codex --step embedding_model")
      })
  )

  it.scoped.skipIf(!data)("embeds with the installed model and carries its fingerprint", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      h.install()
      // The session lives as long as the layer's scope (this test's).
      const embedder = Context.get(yield* Layer.build(h.layer), Embedder)
      expect(embedder.fingerprint).toEqual(
        fingerprintOf(tinyModelSpec(tinyModelFiles(data ?? ""), "http://127.0.0.1:9"))
      )
      const vectors = yield* embedder.embed(["hello", "world"], "passage")
      expect(vectors.map((v) => v.length)).toEqual([8, 8])
    })
  )
})
