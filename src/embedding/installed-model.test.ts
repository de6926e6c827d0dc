import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { FakeModelRuntimeLive } from "../../testing/fake-model.js"
import { writeVerification } from "../../testing/model-test-verification.js"
import { ConfigFile } from "../config/config-file.js"
import { ModelFile, ModelSpec } from "../domain/model-spec.js"
import { SafeFs, type StatEntry } from "../fs/safe-fs.js"
import { Paths, resolvePaths } from "../paths/paths.js"
import { InstalledModel } from "./installed-model.js"
import { activeModelFolder } from "./model-location.js"
import { ModelRuntime } from "./model-runtime.js"

const contents = { "m.onnx": "not really a graph", "tokenizer.json": "{}" }
const files = Object.entries(contents).map(
  ([name, text]) =>
    new ModelFile({ name, size: Buffer.byteLength(text), sha256: createHash("sha256").update(text).digest("hex") })
)
const sanity = { query: "q", passages: ["x", "q"] as const, expected_first: 1 }
const spec = new ModelSpec({
  endpoint: "http://127.0.0.1:9",
  repo: "test/model",
  revision: "r1",
  dims: 4,
  onnx_file: "m.onnx",
  files: files as unknown as readonly [ModelFile, ...Array<ModelFile>],
  pooling: "cls",
  normalize: "l2",
  max_tokens: 16,
  prefixes: { query: "", passage: "" },
  sanity
})

/** A home whose config.json names `spec`, its model folder filled with the pinned files. */
const makeHome = Effect.acquireRelease(
  Effect.sync(() => {
    const home = mkdtempSync(NodePath.join(tmpdir(), "blctx-installed-model-"))
    const paths = resolvePaths({ home })
    mkdirSync(paths.configDir, { recursive: true })
    const writeConfig = (expectedFirst: number) =>
      writeFileSync(
        NodePath.join(paths.configDir, "config.json"),
        JSON.stringify({
          model: {
            endpoint: spec.endpoint,
            repo: spec.repo,
            revision: spec.revision,
            dims: spec.dims,
            onnx_file: spec.onnx_file,
            files: spec.files,
            prefixes: spec.prefixes,
            sanity: { ...sanity, expected_first: expectedFirst }
          }
        })
      )
    writeConfig(1)
    const folder = activeModelFolder(paths.cacheDir, spec)
    mkdirSync(folder, { recursive: true })
    for (const [name, text] of Object.entries(contents)) writeFileSync(NodePath.join(folder, name), text)
    const loads: Array<string> = []
    const runtime = Layer.effect(
      ModelRuntime,
      Effect.map(ModelRuntime, (fake) => ({
        load: (f: string, s: ModelSpec) =>
          Effect.zipRight(
            Effect.sync(() => loads.push(f)),
            fake.load(f, s)
          )
      }))
    ).pipe(Layer.provide(FakeModelRuntimeLive))
    // Every file read through a checked descriptor (the configuration, the verification record).
    const reads: Array<string> = []
    const countingFs = Layer.effect(
      SafeFs,
      Effect.map(SafeFs, (fs) => ({
        ...fs,
        readOpened: <E>(path: string, admit: (opened: StatEntry) => Effect.Effect<void, E>) =>
          Effect.zipRight(
            Effect.sync(() => reads.push(NodePath.basename(path))),
            fs.readOpened(path, admit)
          )
      }))
    ).pipe(Layer.provide(NodeSafeFsLive))
    const layer = InstalledModel.Default.pipe(
      Layer.provide(runtime),
      Layer.provide(ConfigFile.Default),
      Layer.provideMerge(Layer.merge(countingFs, Layer.succeed(Paths, Paths.make(paths))))
    )
    return { home, folder, writeConfig, loads, reads, layer }
  }),
  ({ home }) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
)

/** What `load` fails with, as `tag: reason`; "loaded" when it succeeds. */
const loadOutcome = (layer: Layer.Layer<InstalledModel>) =>
  Effect.scoped(Effect.flatMap(InstalledModel, (m) => m.load())).pipe(
    Effect.provide(layer),
    Effect.match({
      onFailure: (e) => `${e._tag}: ${"reason" in e ? e.reason : e.message}`,
      onSuccess: () => "loaded"
    })
  )

describe("InstalledModel: only a model that passed every check of the embedding_model step is loaded", () => {
  it.scoped("refuses a folder whose checks were never recorded, without loading it", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      expect(yield* loadOutcome(h.layer)).toBe(`ModelNotVerified: no check of ${h.folder} is recorded`)
      expect(h.loads).toEqual([])
      const error = yield* Effect.flip(Effect.flatMap(InstalledModel, (m) => m.check()).pipe(Effect.provide(h.layer)))
      expect(error._tag === "ModelNotVerified" && error.remediation).toBe(
        "Run: blctx install codex --step embedding_model"
      )
    })
  )

  it.scoped("refuses a model whose sanity check failed, saying what failed", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      writeVerification(h.folder, spec, "ranked-retrieval check failed: passage 0 ranked first, expected 1")
      expect(yield* loadOutcome(h.layer)).toBe(
        "ModelNotVerified: ranked-retrieval check failed: passage 0 ranked first, expected 1"
      )
      expect(h.loads).toEqual([])
    })
  )

  it.scoped("loads a model that passed, and refuses it again once a file or the sanity check changes", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      writeVerification(h.folder, spec)
      expect(yield* loadOutcome(h.layer)).toBe("loaded")
      expect(h.loads).toEqual([h.folder])

      h.writeConfig(0)
      expect(yield* loadOutcome(h.layer)).toBe(
        `ModelNotVerified: the sanity check in the configuration changed after ${h.folder} was checked`
      )
      h.writeConfig(1)
      expect(yield* loadOutcome(h.layer)).toBe("loaded")

      // Same size, new content: caught by the modification time, without hashing.
      const graph = NodePath.join(h.folder, "m.onnx")
      writeFileSync(graph, "NOT really a graph")
      utimesSync(graph, new Date(), new Date(Date.now() + 5_000))
      expect(yield* loadOutcome(h.layer)).toBe(`ModelNotVerified: ${graph} changed after it was checked`)
      expect(h.loads).toHaveLength(2)
    })
  )

  it.scoped("reports a missing file as not installed, before any record is consulted", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      writeVerification(h.folder, spec)
      rmSync(NodePath.join(h.folder, "tokenizer.json"))
      expect(yield* loadOutcome(h.layer)).toBe(
        `ModelNotInstalled: ${NodePath.join(h.folder, "tokenizer.json")} is missing`
      )
    })
  )

  it.scoped("a check over unchanged files reads nothing again, and sees any change at the next check", () =>
    Effect.gen(function* () {
      const h = yield* makeHome
      writeVerification(h.folder, spec)
      const model = yield* InstalledModel.pipe(Effect.provide(h.layer))
      const outcome = model.check().pipe(
        Effect.match({
          onFailure: (e) => `${e._tag}: ${"reason" in e ? e.reason : e.message}`,
          onSuccess: () => "passed"
        })
      )
      // The first checks read the configuration and the record (the second remembers what the
      // first found it had to look at); later ones only look at the files' metadata.
      for (let i = 0; i < 5; i++) expect(yield* outcome).toBe("passed")
      const readsOfTwoChecks = ["config.json", ".blctx-verification.json", "config.json", ".blctx-verification.json"]
      expect(h.reads).toEqual(readsOfTwoChecks)

      h.writeConfig(0)
      expect(yield* outcome).toBe(
        `ModelNotVerified: the sanity check in the configuration changed after ${h.folder} was checked`
      )
      h.writeConfig(1)
      expect(yield* outcome).toBe("passed")

      // Same size, new content, the modification time moved: seen although nothing else changed.
      const graph = NodePath.join(h.folder, "m.onnx")
      writeFileSync(graph, "NOT really a graph")
      utimesSync(graph, new Date(), new Date(Date.now() + 5_000))
      expect(yield* outcome).toBe(`ModelNotVerified: ${graph} changed after it was checked`)

      // A record that says the checks failed is seen the same way.
      writeFileSync(graph, contents["m.onnx"])
      writeVerification(h.folder, spec, "ranked-retrieval check failed")
      expect(yield* outcome).toBe("ModelNotVerified: ranked-retrieval check failed")
      rmSync(NodePath.join(h.folder, "tokenizer.json"))
      expect(yield* outcome).toBe(`ModelNotInstalled: ${NodePath.join(h.folder, "tokenizer.json")} is missing`)
    })
  )
})
