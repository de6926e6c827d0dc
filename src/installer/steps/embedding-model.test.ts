import { createHash, randomUUID } from "node:crypto"
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpDownloaderLive } from "../../../layers/http-downloader.js"
import { NodeFileDigestLive } from "../../../layers/model-file-digest.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { OnnxModelRuntimeLive } from "../../../layers/onnx-model-runtime.js"
import {
  TINY_REPO,
  TINY_REVISION,
  testModelData,
  tinyModelBytes,
  tinyModelConfig,
  tinyModelFiles,
  tinyModelSpec
} from "../../../testing/model-test-folder.js"
import { type ModelServer, startModelServer } from "../../../testing/model-test-server.js"
import { ConfigFile } from "../../config/config-file.js"
import { InstallationId } from "../../domain/installation-id.js"
import { DEFAULT_MODEL_SPEC } from "../../domain/model-spec.js"
import { DownloadError, Downloader, type DownloadRequest } from "../../embedding/downloader.js"
import { InstalledModel } from "../../embedding/installed-model.js"
import { stagingModelFolder } from "../../embedding/model-location.js"
import { VERIFICATION_FILE_NAME } from "../../embedding/model-verification.js"
import type { SafeFs } from "../../fs/safe-fs.js"
import { swappingSafeFs, symlinkSwap } from "../../fs/swapping-safe-fs.test-support.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import type { StepProgress, StepRun } from "../step.js"
import { runOf } from "../step-run.test-support.js"
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

const tinySpec = () => tinyModelSpec(tinyModelFiles(data ?? ""))
const configPath = (home: Home) => NodePath.join(home.paths.configDir, "config.json")

const writeConfig = (home: Home, server: ModelServer, expectedFirst?: number) => {
  const config = tinyModelConfig(data ?? "", server.endpoint)
  const sanity = { ...config.model.sanity, expected_first: expectedFirst ?? config.model.sanity.expected_first }
  writeFileSync(configPath(home), JSON.stringify({ model: { ...config.model, sanity } }))
}

/** The live layers the step uses in the product, rooted in `home`; the downloader can be replaced. */
const live = (
  home: Home,
  downloader: Layer.Layer<Downloader> = HttpDownloaderLive,
  safeFs: Layer.Layer<SafeFs> = NodeSafeFsLive
) =>
  Layer.mergeAll(ManifestStore.Default, ConfigFile.Default).pipe(
    Layer.provideMerge(Layer.mergeAll(safeFs, Layer.succeed(Paths, Paths.make(home.paths)))),
    Layer.merge(Layer.mergeAll(downloader, NodeFileDigestLive, OnnxModelRuntimeLive))
  )

/** The step with every live layer it uses in the product, rooted in `home`. */
const step = (home: Home, downloader?: Layer.Layer<Downloader>) =>
  embeddingModelStep.pipe(Effect.provide(live(home, downloader)))

/** What the daemon's model loading says about the folder now (it checks the record, not the hashes). */
const daemonView = (home: Home) =>
  Effect.flatMap(InstalledModel, (m) => m.check()).pipe(
    Effect.provide(InstalledModel.Default.pipe(Layer.provide(live(home)))),
    Effect.match({
      onFailure: (e) => `${e._tag}: ${"reason" in e ? e.reason : e.message}`,
      onSuccess: () => "usable"
    })
  )

const readRecord = (folder: string) =>
  JSON.parse(readFileSync(NodePath.join(folder, VERIFICATION_FILE_NAME), "utf8")) as {
    fingerprint: string
    files: Array<{ name: string; size: number; sha256: string; mtime_ms: number }>
    sanity: { expected_first: number }
    result: { _tag: string; failure?: string; first?: number }
  }

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

const runWith = (seen: Array<StepProgress>, purge = false): StepRun =>
  runOf("install", { purge, hooks: "decline", progress: (p) => Effect.sync(() => seen.push(p)) })

const modelsDir = (home: Home) => NodePath.join(home.paths.cacheDir, "models")
const activeDir = (home: Home) => {
  const entries = readdirSync(modelsDir(home)).filter((e) => !e.startsWith("."))
  expect(entries).toHaveLength(1)
  return NodePath.join(modelsDir(home), entries[0] ?? "")
}

describe("embedding_model step with the tiny model on a loopback server (BLCTX_TEST_MODEL_DATA)", () => {
  it.scoped.skipIf(!data)("refuses a model file swapped for a link between its lstat and its hash", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve()
      writeConfig(home, server)
      yield* writeManifest(home)
      yield* (yield* step(home)).install(runWith([]))
      const first = tinySpec().files[0]?.name ?? ""
      const path = NodePath.join(activeDir(home), first)
      // A copy with the very same bytes: only the link gives it away.
      const copy = NodePath.join(home.home, "copy-of-model-file")
      writeFileSync(copy, readFileSync(path))
      const before = readFileSync(copy)
      const swapping = swappingSafeFs({ path, swap: symlinkSwap(path, copy) })
      const s = yield* embeddingModelStep.pipe(Effect.provide(live(home, HttpDownloaderLive, swapping)))
      const refused = yield* Effect.flip(s.verify(runWith([])))
      expect(refused.detail).toBe(`${path} was replaced by a symbolic link between check and use; left untouched`)
      expect(readFileSync(copy).equals(before)).toBe(true)
    })
  )

  it.scoped.skipIf(!data)("downloads, resumes an interrupted file, checks hashes, activates and verifies offline", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve({ cutFirst: ["model_optimized.onnx"] })
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      const seen: Array<StepProgress> = []

      const installed = yield* s.install(runWith(seen))
      expect(installed.detail).toMatch(/^downloaded 1\.1 MiB, resumed 0\.2 MiB; verified and activated /)
      const onnxRequests = server.requests.filter((r) => r.path.startsWith("/cdn/model_optimized.onnx"))
      expect(onnxRequests).toHaveLength(2)
      expect(onnxRequests[0]?.range).toBeUndefined()
      expect(onnxRequests[1]?.range).toMatch(/^bytes=\d+-$/)
      expect(onnxRequests[1]?.status).toBe(206)

      const active = activeDir(home)
      expect(readdirSync(active).sort()).toEqual(
        [VERIFICATION_FILE_NAME, ...tinyModelBytes(data ?? "").map((f) => f.name)].sort()
      )
      expect(readdirSync(modelsDir(home))).toEqual([NodePath.basename(active)])
      // Every check passed, so the record says so: private, for these files as they are.
      expect(lstatSync(NodePath.join(active, VERIFICATION_FILE_NAME)).mode & 0o777).toBe(0o600)
      const record = readRecord(active)
      expect(record.result).toMatchObject({ _tag: "passed", first: 1 })
      expect(record.files.map((f) => [f.name, f.size, f.mtime_ms])).toEqual(
        tinyModelBytes(data ?? "").map((f) => [f.name, f.bytes.length, statSync(NodePath.join(active, f.name)).mtimeMs])
      )
      expect(yield* daemonView(home)).toBe("usable")

      const verified = yield* s.verify(runWith(seen))
      expect(verified.detail).toMatch(
        /blctx-test\/tiny-encoder@test, 8 dims, fingerprint [0-9a-f]{16}; sanity check ranked passage 1 first \(0\.9\d\d|1\.000\)/
      )
      const words = seen.map((p) => p.label.split(" ")[0])
      expect(words.filter((w, i) => w !== words[i - 1])).toEqual([
        "checking",
        "downloading",
        "loading",
        "verifying",
        "checking",
        "loading",
        "verifying"
      ])
      const fractions = seen.filter((p) => p.label.startsWith("downloading")).map((p) => p.fraction ?? -1)
      expect(fractions.at(-1)).toBe(1)

      // A rerun finds the verified cache and fetches nothing.
      const before = server.requests.length
      expect((yield* s.install(runWith([]))).detail).toBe(`model already in ${active}`)
      expect(server.requests).toHaveLength(before)

      // Everything it may create is recorded for --purge.
      const manifest = readManifest(home)
      expect(manifest.created_directories).toContain(active)
      expect(manifest.owned_files).toContain(NodePath.join(active, "model_optimized.onnx"))
      expect(manifest.owned_files).toContain(NodePath.join(active, VERIFICATION_FILE_NAME))
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
        const failure = yield* Effect.flip(s.install(runWith([])))
        // The server destroys the socket mid-body: the client sees a reset or an early end,
        // whichever the kernel delivers first, and names either.
        expect(failure.detail).toMatch(
          /model_optimized\.onnx failed: the connection (was interrupted|closed) after \d+ of 345785 bytes/
        )
        const part = NodePath.join(stagingModelFolder(home.paths.cacheDir, tinySpec()), "model_optimized.onnx.part")
        expect(failure.remediation).toBe(
          `Check the network and rerun (Run: blctx install codex --step embedding_model). The partial file ${part} (${statSync(part).size} bytes) is kept and resumed next time. model.endpoint in ${configPath(home)} points at ${server.endpoint}; check it or remove it to use the default.`
        )
        const cut = server.requests.filter((r) => r.path.endsWith("model_optimized.onnx") && r.status !== 302)
        expect(cut.map((r) => r.status)).toEqual([200, 206, 206, 206])

        const installed = yield* s.install(runWith([]))
        expect(installed.detail).toMatch(/resumed 0\.3 MiB; verified and activated/)
        const resumed = server.requests
          .filter((r) => r.path.endsWith("model_optimized.onnx") && r.status !== 302)
          .at(-1)
        expect(resumed?.status).toBe(206)
        expect(Number(/^bytes=(\d+)-$/.exec(resumed?.range ?? "")?.[1])).toBeGreaterThan(300_000)
        expect((yield* s.verify(runWith([]))).detail).toContain("sanity check ranked passage 1 first")
      })
  )

  it.scoped.skipIf(!data)("refuses a file whose SHA-256 differs from the pin and activates nothing", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve({ corrupt: "vocab.txt" })
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      const failure = yield* Effect.flip(s.install(runWith([])))
      expect(failure.detail).toContain("vocab.txt served 231508 bytes with SHA-256")
      expect(failure.detail).toContain("The file was discarded.")
      expect(failure.remediation).toContain("model.endpoint")
      expect(readdirSync(modelsDir(home)).filter((e) => !e.startsWith("."))).toEqual([])
      const verify = yield* Effect.flip(s.verify(runWith([])))
      expect(verify.detail).toMatch(/^the embedding model blctx-test\/tiny-encoder@test is not installed \(no \/.+\)$/)
      expect(verify.remediation).toMatch(
        /^Run: blctx install codex --step embedding_model \(it downloads .* MiB from http:\/\/127\.0\.0\.1:\d+ \(model\.endpoint in .*config\.json\)\)$/
      )
    })
  )

  it.scoped.skipIf(!data)("fails verification when an installed file changes, and install repairs it", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve()
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      yield* s.install(runWith([]))
      const tokenizer = NodePath.join(activeDir(home), "tokenizer_config.json")
      writeFileSync(tokenizer, readFileSync(tokenizer, "utf8").replace("512", "511"))
      expect(yield* daemonView(home)).toBe(`ModelNotVerified: ${tokenizer} changed after it was checked`)
      // A change the modification time does not show (the record is made to match the file as it is
      // now): only hashing notices, so the daemon's cheap look cannot.
      const recordPath = NodePath.join(activeDir(home), VERIFICATION_FILE_NAME)
      const record = readRecord(activeDir(home))
      for (const f of record.files) {
        if (f.name === "tokenizer_config.json") f.mtime_ms = lstatSync(tokenizer).mtimeMs
      }
      writeFileSync(recordPath, JSON.stringify(record))
      expect(yield* daemonView(home)).toBe("usable")
      const failure = yield* Effect.flip(s.verify(runWith([])))
      expect(failure.detail).toMatch(/tokenizer_config\.json has SHA-256 [0-9a-f]{64}; the pin says/)
      // Verify (status) changes nothing, the record included: install is what records a new verdict.
      expect(yield* daemonView(home)).toBe("usable")
      yield* s.install(runWith([]))
      expect((yield* s.verify(runWith([]))).detail).toContain("sanity check ranked passage 1 first")
      expect(yield* daemonView(home)).toBe("usable")
    })
  )

  it.scoped.skipIf(!data)(
    "records a failed sanity check so the model is not used; a rerun with a right check records it passed",
    () =>
      Effect.gen(function* () {
        const home = yield* makeHome
        const server = yield* serve()
        writeConfig(home, server, 0)
        yield* writeManifest(home)
        const s = yield* step(home)
        const failure = yield* Effect.flip(s.install(runWith([])))
        expect(failure.detail).toMatch(
          /^model check failed: ranked-retrieval check failed: passage 1 ranked first, expected 0 \(scores /
        )
        const active = activeDir(home)
        expect(failure.remediation).toBe(
          `The model in ${active} does not behave as its spec says; check "model" in ${configPath(home)}. Until this step passes, the daemon does not use the model and search stays lexical.`
        )
        const record = readRecord(active)
        expect(record.result).toEqual({ _tag: "failed", failure: failure.detail.replace(/^model check failed: /, "") })
        expect(yield* daemonView(home)).toBe(`ModelNotVerified: ${record.result.failure}`)
        // status says the same, and changes nothing.
        expect((yield* Effect.flip(s.verify(runWith([])))).detail).toBe(failure.detail)
        expect(readRecord(active)).toEqual(record)

        writeConfig(home, server)
        // The files pass now, but nothing recorded that yet: status says the daemon does not use them.
        expect((yield* Effect.flip(s.verify(runWith([])))).detail).toBe(
          `the model passes its checks now, but the daemon does not use it until a run of this step records them: the sanity check in the configuration changed after ${active} was checked`
        )
        expect((yield* s.install(runWith([]))).detail).toBe(`model already in ${active}`)
        expect(readRecord(active).result).toMatchObject({ _tag: "passed", first: 1 })
        expect(yield* daemonView(home)).toBe("usable")
        expect((yield* s.verify(runWith([]))).detail).toContain("sanity check ranked passage 1 first")
      })
  )

  it.scoped.skipIf(!data)(
    "fails status for a model installed before checks were recorded, until install records them",
    () =>
      Effect.gen(function* () {
        const home = yield* makeHome
        const server = yield* serve()
        writeConfig(home, server)
        yield* writeManifest(home)
        const s = yield* step(home)
        yield* s.install(runWith([]))
        const active = activeDir(home)
        rmSync(NodePath.join(active, VERIFICATION_FILE_NAME))
        const failure = yield* Effect.flip(s.verify(runWith([])))
        expect(failure.detail).toBe(
          `the model passes its checks now, but the daemon does not use it until a run of this step records them: no check of ${active} is recorded`
        )
        expect(failure.remediation).toBe("Run: blctx install codex --step embedding_model")
        expect(existsSync(NodePath.join(active, VERIFICATION_FILE_NAME))).toBe(false)
        yield* s.install(runWith([]))
        expect(yield* daemonView(home)).toBe("usable")
      })
  )

  it.scoped.skipIf(!data)("uninstall keeps the cache; --purge removes only the recorded model files", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const server = yield* serve()
      writeConfig(home, server)
      yield* writeManifest(home)
      const s = yield* step(home)
      yield* s.install(runWith([]))
      const active = activeDir(home)
      expect((yield* s.uninstall(runWith([]))).detail).toContain("model kept in")
      expect(readdirSync(active)).toHaveLength(7)

      const mine = NodePath.join(active, "my-notes.txt")
      writeFileSync(mine, "not blctx's")
      const purged = yield* s.uninstall(runWith([], true))
      expect(purged.detail).toBe(`removed 7 model files; kept non-empty ${active}, ${modelsDir(home)}`)
      expect(readdirSync(active)).toEqual(["my-notes.txt"])
      rmSync(mine)
      const again = yield* s.uninstall(runWith([], true))
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
      const failure = yield* Effect.flip(s.verify(runWith([])))
      expect(failure.detail).toContain('field "model.dims"')
      expect(failure.remediation).toContain('Fix "model.dims" in')
    })
  )

  it.scoped("reports the default model as not installed, with the command that installs it", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      yield* writeManifest(home)
      const s = yield* step(home)
      const failure = yield* Effect.flip(s.verify(runWith([])))
      expect(failure.detail).toMatch(
        /^the embedding model Qdrant\/bge-small-en@8791246cc2a7 is not installed \(no \/.+\)$/
      )
      expect(failure.detail).toContain(modelsDir(home))
      expect(failure.remediation).toBe(
        `Run: blctx install codex --step embedding_model (it downloads 127.6 MiB from https://huggingface.co; ${mirrorHint(home)})`
      )
    })
  )

  it.scoped(
    "doctor says which files are missing, where it looked, what is partly downloaded and how to use a mirror",
    () =>
      Effect.gen(function* () {
        const home = yield* makeHome
        writeSmallModelConfig(home)
        yield* writeManifest(home)
        const s = yield* step(
          home,
          fakeDownloader("ab", () => ({ message: "aborted", retryable: true }))
        )
        yield* Effect.flip(s.install(runWith([])))
        const [staging] = readdirSync(modelsDir(home)).filter((e) => e.startsWith(".staging-"))
        const stagingDir = NodePath.join(modelsDir(home), staging ?? "")
        const active = stagingDir.replace(".staging-", "")
        const found = yield* s.diagnose(runWith([]))
        expect(found.detail).toBe(
          [
            `Qdrant/bge-small-en@8791246cc2a7: 1 files, 0.0 MiB`,
            `missing from ${active}: m.onnx`,
            `in ${stagingDir}: ${NodePath.join(stagingDir, "m.onnx.part")} has 2 of 4 bytes: the next run resumes it`,
            `to fix: Run: blctx install codex --step embedding_model (it downloads 0.0 MiB from https://huggingface.co; ${mirrorHint(home)})`
          ].join("; ")
        )
      })
  )
})

const mirrorHint = (home: Home) =>
  `to download from a mirror or a local server, set "model": {"endpoint": "URL"} in ${configPath(home)} (files are fetched from URL/<repo>/resolve/<revision>/<name>)`

/** A one-file model small enough to fake: `m.onnx` holds "abcd". */
const SMALL_FILE = {
  name: "m.onnx",
  size: 4,
  sha256: createHash("sha256").update("abcd").digest("hex")
}
const writeSmallModelConfig = (home: Home, endpoint?: string) =>
  writeFileSync(
    configPath(home),
    JSON.stringify({
      model: { ...(endpoint === undefined ? {} : { endpoint }), files: [SMALL_FILE], onnx_file: "m.onnx" }
    })
  )
const smallUrl = (endpoint: string) => `${endpoint}/Qdrant/bge-small-en/resolve/${DEFAULT_MODEL_SPEC.revision}/m.onnx`

/** A downloader that puts `bytes` into the `.part` file and then fails as `failure` says. */
const fakeDownloader = (
  bytes: string,
  failure?: (request: DownloadRequest) => { readonly message: string; readonly retryable: boolean }
) =>
  Layer.succeed(Downloader, {
    fetch: (request) =>
      Effect.gen(function* () {
        if (bytes.length > 0) writeFileSync(request.part, bytes)
        if (failure === undefined) return { resumedFrom: 0, bytesOnDisk: bytes.length }
        return yield* new DownloadError({ url: request.url, path: request.part, ...failure(request) })
      })
  })

/** A loopback port nothing listens on. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address()
        server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 9))
      })
    })
)

describe("embedding_model download failures say what is on disk and where it was fetched from", () => {
  const RERUN = "Run: blctx install codex --step embedding_model"
  const HF = "https://huggingface.co"

  it.scoped("with nothing downloaded, says so (and names the default endpoint)", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      writeSmallModelConfig(home)
      yield* writeManifest(home)
      const s = yield* step(
        home,
        fakeDownloader("", () => ({ message: "request failed: getaddrinfo EAI_AGAIN huggingface.co", retryable: true }))
      )
      const failure = yield* Effect.flip(s.install(runWith([])))
      expect(failure.detail).toBe(
        `download of ${smallUrl(HF)} failed: request failed: getaddrinfo EAI_AGAIN huggingface.co`
      )
      expect(failure.remediation).toBe(
        `Check the network and rerun (${RERUN}). No partial file of m.onnx is on disk; the next run starts it from the beginning. It tried the default endpoint ${HF}; ${mirrorHint(home)}.`
      )
      const staging = readdirSync(modelsDir(home)).filter((e) => e.startsWith(".staging-"))
      expect(staging.map((d) => readdirSync(NodePath.join(modelsDir(home), d)))).toEqual([[]])
    })
  )

  it.scoped("with a partial file, names it and its size", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      writeSmallModelConfig(home)
      yield* writeManifest(home)
      const s = yield* step(
        home,
        fakeDownloader("ab", () => ({
          message: "the connection was interrupted after 2 of 4 bytes: aborted",
          retryable: true
        }))
      )
      const failure = yield* Effect.flip(s.install(runWith([])))
      const [staging] = readdirSync(modelsDir(home)).filter((e) => e.startsWith(".staging-"))
      const part = NodePath.join(modelsDir(home), staging ?? "", "m.onnx.part")
      expect(failure.remediation).toBe(
        `Check the network and rerun (${RERUN}). The partial file ${part} (2 bytes) is kept and resumed next time. It tried the default endpoint ${HF}; ${mirrorHint(home)}.`
      )
      expect(readFileSync(part, "utf8")).toBe("ab")
    })
  )

  it.scoped("when config.json overrides model.endpoint, says so (a real refused connection)", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const port = yield* closedPort
      const endpoint = `http://127.0.0.1:${port}`
      writeSmallModelConfig(home, endpoint)
      yield* writeManifest(home)
      const s = yield* step(home)
      const failure = yield* Effect.flip(s.install(runWith([])))
      expect(failure.detail).toBe(
        `download of ${smallUrl(endpoint)} failed: request failed: connect ECONNREFUSED 127.0.0.1:${port}`
      )
      expect(failure.remediation).toBe(
        `Check the network and rerun (${RERUN}). No partial file of m.onnx is on disk; the next run starts it from the beginning. model.endpoint in ${configPath(home)} points at ${endpoint}; check it or remove it to use the default.`
      )
    })
  )

  it.scoped("a file served at another size than pinned is discarded with a clear error, never resumed", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      const big = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startModelServer({
            repo: "Qdrant/bge-small-en",
            revision: DEFAULT_MODEL_SPEC.revision,
            files: [{ name: "m.onnx", bytes: Buffer.from("abcdefgh") }]
          })
        ),
        (srv) => Effect.promise(() => srv.close())
      )
      writeSmallModelConfig(home, big.endpoint)
      yield* writeManifest(home)
      const s = yield* step(home)
      for (let run = 0; run < 2; run++) {
        const failure = yield* Effect.flip(s.install(runWith([])))
        expect(failure.detail).toBe(
          `download of ${smallUrl(big.endpoint)} failed: the server offers 8 bytes where 4 are expected: it is not the pinned file, and nothing of it was kept`
        )
        expect(failure.remediation).toContain("No partial file of m.onnx is on disk")
        expect(failure.remediation).toContain(`model.endpoint in ${configPath(home)} points at ${big.endpoint}`)
        const staging = readdirSync(modelsDir(home)).filter((e) => e.startsWith(".staging-"))
        expect(staging.map((d) => readdirSync(NodePath.join(modelsDir(home), d)))).toEqual([[]])
      }
    })
  )

  it.scoped("never shows the password of an endpoint URL", () =>
    Effect.gen(function* () {
      const home = yield* makeHome
      writeSmallModelConfig(home, "https://mirror-user:s3cret@mirror.example/hf")
      yield* writeManifest(home)
      const shown = "https://mirror-user:***@mirror.example/hf"

      const refused = yield* Effect.flip(
        (yield* step(
          home,
          fakeDownloader("", (r) => ({ message: `HTTP 404 from ${r.url}`, retryable: false }))
        )).install(runWith([]))
      )
      expect(refused.detail).toBe(`download of ${smallUrl(shown)} failed: HTTP 404 from ${smallUrl(shown)}`)
      expect(refused.remediation).toBe(
        `Rerun once the endpoint serves revision ${DEFAULT_MODEL_SPEC.revision} of Qdrant/bge-small-en (${RERUN}). No partial file of m.onnx is on disk; the next run starts it from the beginning. model.endpoint in ${configPath(home)} points at ${shown}; check it or remove it to use the default.`
      )

      const wrong = yield* Effect.flip((yield* step(home, fakeDownloader("abce"))).install(runWith([])))
      expect(wrong.detail).toBe(
        `${smallUrl(shown)} served 4 bytes with SHA-256 ${createHash("sha256").update("abce").digest("hex")}; the pin is 4 bytes, ${SMALL_FILE.sha256}. The file was discarded.`
      )
      expect(wrong.remediation).toBe(
        `Rerun once the endpoint serves revision ${DEFAULT_MODEL_SPEC.revision} of Qdrant/bge-small-en (${RERUN}). model.endpoint in ${configPath(home)} points at ${shown}; check it or remove it to use the default.`
      )
      for (const f of [refused, wrong]) expect(JSON.stringify(f)).not.toContain("s3cret")
    })
  )
})
