import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { HttpDownloaderLive } from "../../../layers/http-downloader.js"
import { NodeFileDigestLive } from "../../../layers/model-file-digest.js"
import {
  TINY_REPO,
  TINY_REVISION,
  testModelData,
  tinyModelBytes,
  tinyModelConfig
} from "../../../layers/model-test-folder.js"
import { type ModelServer, startModelServer } from "../../../layers/model-test-server.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { OnnxModelRuntimeLive } from "../../../layers/onnx-model-runtime.js"
import { ConfigFile } from "../../config/config-file.js"
import { InstallationId } from "../../domain/installation-id.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import type { StepProgress, StepRun } from "../step.js"
import { embeddingModelStep } from "./embedding-model.js"

const data = testModelData()

interface Home {
  readonly home: string
  readonly paths: ReturnType<typeof resolvePaths>
}

const makeHome = Effect.acquireRelease(
  Effect.sync((): Home => {
    const home = mkdtempSync(NodePath.join(tmpdir(), "blctx-model-step-"))
    const paths = resolvePaths({
      home,
      XDG_DATA_HOME: NodePath.join(home, "data"),
      XDG_CONFIG_HOME: NodePath.join(home, "config"),
      XDG_CACHE_HOME: NodePath.join(home, "cache"),
      XDG_STATE_HOME: NodePath.join(home, "state")
    })
    for (const dir of [paths.dataDir, paths.configDir, paths.cacheDir, paths.stateDir]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
    }
    return { home, paths }
  }),
  ({ home }) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
)

const serve = (options: { cutFirst?: ReadonlyArray<string>; cutTimes?: number; corrupt?: string } = {}) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      startModelServer({
        repo: TINY_REPO,
        revision: TINY_REVISION,
        files: tinyModelBytes(data ?? "").map((f) =>
          f.name === options.corrupt ? { name: f.name, bytes: Buffer.from(f.bytes).fill(7, 0, 16) } : f
        ),
        ...(options.cutFirst === undefined ? {} : { cutFirst: options.cutFirst }),
        ...(options.cutTimes === undefined ? {} : { cutTimes: options.cutTimes }),
        redirect: true
      })
    ),
    (s) => Effect.promise(() => s.close())
  )

const writeConfig = (home: Home, server: ModelServer) =>
  writeFileSync(
    NodePath.join(home.paths.configDir, "config.json"),
    JSON.stringify(tinyModelConfig(data ?? "", server.endpoint))
  )

/** The step with every live layer it uses in the product, rooted in `home`. */
const step = (home: Home) =>
  embeddingModelStep.pipe(
    Effect.provide(
      Layer.mergeAll(ManifestStore.Default, ConfigFile.Default).pipe(
        Layer.provideMerge(Layer.mergeAll(NodeSafeFsLive, Layer.succeed(Paths, Paths.make(home.paths)))),
        Layer.merge(Layer.mergeAll(HttpDownloaderLive, NodeFileDigestLive, OnnxModelRuntimeLive))
      )
    )
  )

const writeManifest = (home: Home) =>
  Effect.gen(function* () {
    const store = yield* ManifestStore
    const t = new Date().toISOString()
    yield* store.write(
      new Manifest({
        version: 1,
        installation_id: InstallationId.make(randomUUID()),
        state: "active",
        owned_files: [home.paths.database, home.paths.manifest],
        created_directories: [home.paths.dataDir, home.paths.configDir, home.paths.cacheDir, home.paths.stateDir],
        node: process.execPath,
        cli: process.execPath,
        created_at: t,
        updated_at: t,
        choices: {}
      })
    )
  }).pipe(
    Effect.provide(
      ManifestStore.Default.pipe(
        Layer.provide(Layer.merge(NodeSafeFsLive, Layer.succeed(Paths, Paths.make(home.paths))))
      )
    )
  )

const readManifest = (home: Home) => JSON.parse(readFileSync(home.paths.manifest, "utf8")) as Manifest

const runOf = (seen: Array<StepProgress>, purge = false): StepRun => ({
  command: "install",
  purge,
  hooks: "decline",
  progress: (p) => Effect.sync(() => seen.push(p))
})

const modelsDir = (home: Home) => NodePath.join(home.paths.cacheDir, "models")
const activeDir = (home: Home) => {
  const entries = readdirSync(modelsDir(home)).filter((e) => !e.startsWith("."))
  expect(entries).toHaveLength(1)
  return NodePath.join(modelsDir(home), entries[0] ?? "")
}

describe("embedding_model step with the tiny model on a loopback server (BLCTX_TEST_MODEL_DATA)", () => {
  it.scoped.skipIf(!data)("downloads, resumes an interrupted file, checks hashes, activates and verifies offline", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve({ cutFirst: ["model_optimized.onnx"] })
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      const seen: Array<StepProgress> = []

      const installed = yield* s.install(runOf(seen))
      expect(installed.detail).toMatch(/^downloaded 1\.1 MiB, resumed 0\.2 MiB; verified and activated /)
      const onnxRequests = server.requests.filter((r) => r.path.startsWith("/cdn/model_optimized.onnx"))
      expect(onnxRequests).toHaveLength(2)
      expect(onnxRequests[0]?.range).toBeUndefined()
      expect(onnxRequests[1]?.range).toMatch(/^bytes=\d+-$/)
      expect(onnxRequests[1]?.status).toBe(206)

      const active = activeDir(home)
      expect(readdirSync(active).sort()).toEqual(
        tinyModelBytes(data ?? "")
          .map((f) => f.name)
          .sort()
      )
      expect(readdirSync(modelsDir(home))).toEqual([NodePath.basename(active)])

      const verified = yield* s.verify(runOf(seen))
      expect(verified.detail).toMatch(
        /blctx-test\/tiny-encoder@test, 8 dims, fingerprint [0-9a-f]{16}; sanity check ranked passage 1 first \(0\.9\d\d|1\.000\)/
      )
      const words = seen.map((p) => p.label.split(" ")[0])
      expect(words.filter((w, i) => w !== words[i - 1])).toEqual([
        "checking",
        "downloading",
        "checking",
        "loading",
        "verifying"
      ])
      const fractions = seen.filter((p) => p.label.startsWith("downloading")).map((p) => p.fraction ?? -1)
      expect(fractions.at(-1)).toBe(1)

      // A rerun finds the verified cache and fetches nothing.
      const before = server.requests.length
      expect((yield* s.install(runOf([]))).detail).toBe(`model already in ${active}`)
      expect(server.requests).toHaveLength(before)

      // Everything it may create is recorded for --purge.
      const manifest = readManifest(home)
      expect(manifest.created_directories).toContain(active)
      expect(manifest.owned_files).toContain(NodePath.join(active, "model_optimized.onnx"))
    })
  )

  it.scoped.skipIf(!data)(
    "keeps the partial file when every attempt of a run is cut, and the next run resumes it",
    () =>
      Effect.gen(function* () {
        const home = yield* makeHome
        // Four attempts per run, each cut halfway through what remains.
        const server = yield* serve({ cutFirst: ["model_optimized.onnx"], cutTimes: 4 })
        writeConfig(home, server)
        yield* writeManifest(home)
        const s = yield* step(home)
        const failure = yield* Effect.flip(s.install(runOf([])))
        expect(failure.detail).toMatch(
          /model_optimized\.onnx failed: the connection was interrupted after \d+ of 345785 bytes/
        )
        expect(failure.remediation).toMatch(/partial file .*model_optimized\.onnx\.part is kept and resumed/)
        const cut = server.requests.filter((r) => r.path.endsWith("model_optimized.onnx") && r.status !== 302)
        expect(cut.map((r) => r.status)).toEqual([200, 206, 206, 206])

        const installed = yield* s.install(runOf([]))
        expect(installed.detail).toMatch(/resumed 0\.3 MiB; verified and activated/)
        const resumed = server.requests
          .filter((r) => r.path.endsWith("model_optimized.onnx") && r.status !== 302)
          .at(-1)
        expect(resumed?.status).toBe(206)
        expect(Number(/^bytes=(\d+)-$/.exec(resumed?.range ?? "")?.[1])).toBeGreaterThan(300_000)
        expect((yield* s.verify(runOf([]))).detail).toContain("sanity check ranked passage 1 first")
      })
  )

  it.scoped.skipIf(!data)("refuses a file whose SHA-256 differs from the pin and activates nothing", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve({ corrupt: "vocab.txt" })
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      const failure = yield* Effect.flip(s.install(runOf([])))
      expect(failure.detail).toContain("vocab.txt served 231508 bytes with SHA-256")
      expect(failure.detail).toContain("The file was discarded.")
      expect(failure.remediation).toContain("model.endpoint")
      expect(readdirSync(modelsDir(home)).filter((e) => !e.startsWith("."))).toEqual([])
      const verify = yield* Effect.flip(s.verify(runOf([])))
      expect(verify.detail).toBe("the embedding model blctx-test/tiny-encoder@test is not installed")
      expect(verify.remediation).toBe("Run: blctx install codex --step embedding_model")
    })
  )

  it.scoped.skipIf(!data)("fails verification when an installed file changes, and install repairs it", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve()
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      yield* s.install(runOf([]))
      const tokenizer = NodePath.join(activeDir(home), "tokenizer_config.json")
      writeFileSync(tokenizer, readFileSync(tokenizer, "utf8").replace("512", "511"))
      const failure = yield* Effect.flip(s.verify(runOf([])))
      expect(failure.detail).toMatch(/tokenizer_config\.json has SHA-256 [0-9a-f]{64}; the pin says/)
      yield* s.install(runOf([]))
      expect((yield* s.verify(runOf([]))).detail).toContain("sanity check ranked passage 1 first")
    })
  )

  it.scoped.skipIf(!data)("uninstall keeps the cache; --purge removes only the recorded model files", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve()
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      yield* s.install(runOf([]))
      const active = activeDir(home)
      expect((yield* s.uninstall(runOf([]))).detail).toContain("model kept in")
      expect(readdirSync(active)).toHaveLength(6)

      const mine = NodePath.join(active, "my-notes.txt")
      writeFileSync(mine, "not blctx's")
      const purged = yield* s.uninstall(runOf([], true))
      expect(purged.detail).toBe(`removed 6 model files; kept non-empty ${active}, ${modelsDir(home)}`)
      expect(readdirSync(active)).toEqual(["my-notes.txt"])
      rmSync(mine)
      const again = yield* s.uninstall(runOf([], true))
      expect(again.detail).toBe("removed 0 model files")
      expect(existsSync(modelsDir(home))).toBe(false)
      expect(readManifest(home).owned_files.filter((f) => f.includes(`${NodePath.sep}models${NodePath.sep}`))).toEqual(
        []
      )
    })
  )
})

describe("embedding_model step without a model", () => {
  it.scoped("names the bad field of config.json", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      writeFileSync(NodePath.join(home.paths.configDir, "config.json"), JSON.stringify({ model: { dims: "384" } }))
      yield* writeManifest(home)
      const s = yield* step(home)
      const failure = yield* Effect.flip(s.verify(runOf([])))
      expect(failure.detail).toContain('field "model.dims"')
      expect(failure.remediation).toContain('Fix "model.dims" in')
    })
  )

  it.scoped("reports the default model as not installed, with the command that installs it", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      yield* writeManifest(home)
      const s = yield* step(home)
      const failure = yield* Effect.flip(s.verify(runOf([])))
      expect(failure.detail).toBe("the embedding model Qdrant/bge-small-en@8791246cc2a7 is not installed")
      expect(Option.some(failure.remediation)).toEqual(Option.some("Run: blctx install codex --step embedding_model"))
    })
  )
})
