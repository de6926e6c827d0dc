import * as NodePath from "node:path"
import { DateTime, Effect, Option } from "effect"
import type { ConfigError } from "../../config/config.js"
import { ConfigFile } from "../../config/config-file.js"
import { Downloader } from "../../embedding/downloader.js"
import { FileDigest } from "../../embedding/file-digest.js"
import { fingerprintOf } from "../../embedding/fingerprint.js"
import { activeModelFolder, modelsRoot, partFileName, stagingModelFolder } from "../../embedding/model-location.js"
import { ModelRuntime } from "../../embedding/model-runtime.js"
import { type ModelFile, type ModelSpec, modelFileUrl } from "../../embedding/model-spec.js"
import { checkModel } from "../../embedding/sanity.js"
import { type FsError, SafeFs } from "../../fs/safe-fs.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { fail, type Step, type StepFailure, type StepRun } from "../step.js"

const PRIVATE_DIR = 0o700
const DOWNLOAD_ATTEMPTS = 4
const RERUN = "Run: blctx install codex --step embedding_model"

const fromFs = (e: FsError): StepFailure =>
  fail(`${e.op} ${e.path} failed: ${e.code}`, `Check that ${NodePath.dirname(e.path)} exists and belongs to you.`)
const fromConfig = (e: ConfigError): StepFailure =>
  fail(`config ${e.path}${e.field === "" ? "" : ` field "${e.field}"`}: ${e.message}`, e.remediation)

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const isUnder = (root: string, path: string) => path.startsWith(`${root}${NodePath.sep}`)

/**
 * The local embedding model: downloads the spec's files into the cache (resumable, `.part`
 * files), checks the size and SHA-256 of every file, activates the folder with one atomic
 * rename, then verifies offline by loading the model and running the spec's sanity check.
 * Everything it creates is recorded in the manifest first, so `--purge` removes exactly that.
 */
export const embeddingModelStep = Effect.gen(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const manifests = yield* ManifestStore
  const configFile = yield* ConfigFile
  const downloader = yield* Downloader
  const digests = yield* FileDigest
  const runtime = yield* ModelRuntime

  const root = modelsRoot(paths.cacheDir)
  const loadSpec = configFile.load().pipe(
    Effect.map((c) => c.model),
    Effect.mapError(fromConfig)
  )
  const now = DateTime.now.pipe(Effect.map(DateTime.formatIso))

  /** The first file of `folder` whose size or SHA-256 differs from the spec, if any. */
  const firstMismatch = (folder: string, files: ReadonlyArray<ModelFile>) =>
    Effect.gen(function* () {
      for (const file of files) {
        const path = NodePath.join(folder, file.name)
        const entry = yield* fs.lstat(path).pipe(Effect.mapError(fromFs))
        if (Option.isNone(entry)) return Option.some(`${path} is missing`)
        if (entry.value.kind !== "file") return Option.some(`${path} is not a regular file`)
        if (entry.value.size !== file.size) {
          return Option.some(`${path} has ${entry.value.size} bytes; the pin says ${file.size}`)
        }
        const digest = yield* digests.sha256(path).pipe(Effect.mapError(fromFs))
        if (digest.sha256 !== file.sha256) {
          return Option.some(`${path} has SHA-256 ${digest.sha256}; the pin says ${file.sha256}`)
        }
      }
      return Option.none<string>()
    })

  const ensureDirectory = (dir: string) =>
    Effect.gen(function* () {
      const entry = yield* fs.lstat(dir).pipe(Effect.mapError(fromFs))
      if (Option.isSome(entry)) {
        if (entry.value.kind === "directory") return
        return yield* fail(`${dir} exists and is not a directory`, `Move ${dir} aside, then rerun.`)
      }
      yield* fs.makeDirectory(dir, PRIVATE_DIR).pipe(Effect.mapError(fromFs))
    })

  /** Records every path the download may create, before creating any of them. */
  const recordArtifacts = (spec: ModelSpec) =>
    Effect.gen(function* () {
      const manifest = yield* manifests
        .read()
        .pipe(
          Effect.mapError(() =>
            fail(`manifest ${manifests.path} is unreadable`, "Run: blctx doctor --step data_directory")
          )
        )
      if (Option.isNone(manifest)) {
        return yield* fail("blctx is not installed (no manifest)", "Run: blctx install codex --step data_directory")
      }
      const staging = stagingModelFolder(paths.cacheDir, spec)
      const active = activeModelFolder(paths.cacheDir, spec)
      const files = spec.files.flatMap((f) => [
        NodePath.join(staging, f.name),
        NodePath.join(staging, partFileName(f.name)),
        NodePath.join(active, f.name)
      ])
      const m = manifest.value
      const ownedFiles = [...new Set([...m.owned_files, ...files])]
      const directories = [...new Set([...m.created_directories, root, staging, active])]
      if (ownedFiles.length === m.owned_files.length && directories.length === m.created_directories.length) return
      yield* manifests
        .write(
          new Manifest({ ...m, owned_files: ownedFiles, created_directories: directories, updated_at: yield* now })
        )
        .pipe(Effect.mapError(fromFs))
    })

  const download = (run: StepRun, spec: ModelSpec, staging: string) =>
    Effect.gen(function* () {
      const total = spec.files.reduce((n, f) => n + f.size, 0)
      let done = 0
      let fetched = 0
      let resumed = 0
      for (const file of spec.files) {
        const target = NodePath.join(staging, file.name)
        const part = NodePath.join(staging, partFileName(file.name))
        if (yield* fs.exists(target)) {
          if (Option.isNone(yield* firstMismatch(staging, [file]))) {
            done += file.size
            continue
          }
          yield* fs.removeFile(target).pipe(Effect.mapError(fromFs))
        }
        const url = modelFileUrl(spec, file.name)
        const result = yield* downloader
          .fetch({
            url,
            part,
            size: file.size,
            onProgress: (bytes) =>
              run.progress({
                label: `downloading ${file.name} (${mib(done + bytes)} of ${mib(total)})`,
                fraction: total === 0 ? 1 : (done + bytes) / total
              })
          })
          .pipe(
            Effect.retry({ times: DOWNLOAD_ATTEMPTS - 1, while: (e) => e.retryable }),
            Effect.mapError((e) =>
              fail(
                `download of ${url} failed: ${e.message}`,
                e.retryable
                  ? `Check the network and rerun (${RERUN}); the partial file ${e.path} is kept and resumed.`
                  : `Check "model.endpoint" in ${configFile.path} (a mirror must serve the pinned files), then rerun.`
              )
            )
          )
        resumed += result.resumedFrom
        fetched += file.size - result.resumedFrom
        const digest = yield* digests.sha256(part).pipe(Effect.mapError(fromFs))
        if (digest.size !== file.size || digest.sha256 !== file.sha256) {
          yield* fs.removeFile(part).pipe(Effect.mapError(fromFs))
          return yield* fail(
            `${url} served ${digest.size} bytes with SHA-256 ${digest.sha256}; the pin is ${file.size} bytes, ${file.sha256}. The file was discarded.`,
            `Check that "model.endpoint" in ${configFile.path} serves revision ${spec.revision} of ${spec.repo}, then rerun.`
          )
        }
        yield* fs.renameDurable(part, target).pipe(Effect.mapError(fromFs))
        done += file.size
      }
      return { fetched, resumed }
    })

  /** Replaces the active folder by the verified staging folder in one rename. */
  const activate = (spec: ModelSpec, staging: string, active: string) =>
    Effect.gen(function* () {
      if (yield* fs.exists(active)) {
        for (const file of spec.files)
          yield* fs.removeFile(NodePath.join(active, file.name)).pipe(Effect.mapError(fromFs))
        const removed = yield* fs.removeEmptyDirectory(active).pipe(Effect.mapError(fromFs))
        if (!removed) {
          return yield* fail(
            `${active} holds files that are not part of the model; it was left in place`,
            `Move ${active} aside, then rerun (${RERUN}).`
          )
        }
      }
      yield* fs.renameDurable(staging, active).pipe(Effect.mapError(fromFs))
    })

  const install = Effect.fn("EmbeddingModel.install")(function* (run: StepRun) {
    const spec = yield* loadSpec
    const active = activeModelFolder(paths.cacheDir, spec)
    yield* run.progress({ label: "checking cache", fraction: 0 })
    if ((yield* fs.exists(active)) && Option.isNone(yield* firstMismatch(active, spec.files))) {
      return { detail: `model already in ${active}` }
    }
    yield* recordArtifacts(spec)
    const staging = stagingModelFolder(paths.cacheDir, spec)
    yield* ensureDirectory(root)
    yield* ensureDirectory(staging)
    const { fetched, resumed } = yield* download(run, spec, staging)
    yield* activate(spec, staging, active)
    const resumedNote = resumed > 0 ? `, resumed ${mib(resumed)}` : ""
    return { detail: `downloaded ${mib(fetched)}${resumedNote}; verified and activated ${active}` }
  })

  const verify = Effect.fn("EmbeddingModel.verify")(function* (run: StepRun) {
    const spec = yield* loadSpec
    const active = activeModelFolder(paths.cacheDir, spec)
    yield* run.progress({ label: "checking files", fraction: 0 })
    if (!(yield* fs.exists(active))) {
      return yield* fail(`the embedding model ${spec.repo}@${spec.revision.slice(0, 12)} is not installed`, RERUN)
    }
    const mismatch = yield* firstMismatch(active, spec.files)
    if (Option.isSome(mismatch)) return yield* fail(mismatch.value, RERUN)
    yield* run.progress({ label: "loading model", fraction: 0.5 })
    const result = yield* Effect.scoped(
      Effect.gen(function* () {
        const embedder = yield* runtime
          .load(active, spec)
          .pipe(Effect.mapError((e) => fail(`cannot load the model in ${e.folder}: ${e.message}`, e.remediation)))
        yield* run.progress({ label: "verifying", fraction: 0.75 })
        return yield* checkModel(embedder, spec).pipe(
          Effect.mapError((e) =>
            fail(
              `model check failed: ${e.message}`,
              e._tag === "EmbedError"
                ? RERUN
                : `The model in ${active} does not behave as its spec says; check "model" in ${configFile.path}.`
            )
          )
        )
      })
    )
    const fingerprint = fingerprintOf(spec)
    const score = result.scores[result.first] ?? 0
    return {
      detail: `${fingerprint.model}@${fingerprint.revision.slice(0, 12)}, ${result.dims} dims, fingerprint ${fingerprint.key}; sanity check ranked passage ${result.first} first (${score.toFixed(3)})`
    }
  })

  const uninstall = Effect.fn("EmbeddingModel.uninstall")(function* (run: StepRun) {
    if (!run.purge) return { detail: `model kept in ${root} for reuse (--purge removes it)` }
    const manifest = yield* manifests
      .read()
      .pipe(
        Effect.mapError(() =>
          fail(`manifest ${manifests.path} is unreadable`, "Run: blctx doctor --step data_directory")
        )
      )
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest" }
    const m = manifest.value
    const files = m.owned_files.filter((f) => isUnder(root, f))
    const directories = m.created_directories.filter((d) => d === root || isUnder(root, d))
    let removed = 0
    for (const file of files) {
      const entry = yield* fs.lstat(file).pipe(Effect.mapError(fromFs))
      if (Option.isSome(entry) && entry.value.kind === "file") {
        yield* fs.removeFile(file).pipe(Effect.mapError(fromFs))
        removed++
      }
    }
    const kept: Array<string> = []
    for (const dir of [...directories].sort((a, b) => b.length - a.length)) {
      const gone = yield* fs.removeEmptyDirectory(dir).pipe(Effect.mapError(fromFs))
      if (!gone && (yield* fs.exists(dir))) kept.push(dir)
    }
    yield* manifests
      .write(
        new Manifest({
          ...m,
          owned_files: m.owned_files.filter((f) => !files.includes(f)),
          created_directories: m.created_directories.filter((d) => !directories.includes(d) || kept.includes(d)),
          updated_at: yield* now
        })
      )
      .pipe(Effect.mapError(fromFs))
    const keptNote = kept.length > 0 ? `; kept non-empty ${kept.join(", ")}` : ""
    return { detail: `removed ${removed} model files${keptNote}` }
  })

  return {
    id: "embedding_model",
    title: "Local embedding model",
    requires: ["data_directory"],
    install,
    verify,
    uninstall
  } satisfies Step<never>
})
