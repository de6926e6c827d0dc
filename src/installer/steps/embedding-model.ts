import * as NodePath from "node:path"
import { DateTime, Effect, Either, Option } from "effect"
import type { BlctxConfig, ConfigError } from "../../config/config.js"
import { ConfigFile } from "../../config/config-file.js"
import { type ModelFile, type ModelSpec, modelFileUrl } from "../../domain/model-spec.js"
import { Downloader } from "../../embedding/downloader.js"
import { FileDigest } from "../../embedding/file-digest.js"
import { fingerprintOf } from "../../embedding/fingerprint.js"
import { activeModelFolder, modelsRoot, partFileName, stagingModelFolder } from "../../embedding/model-location.js"
import { ModelRuntime } from "../../embedding/model-runtime.js"
import {
  type CheckedFile,
  ModelVerification,
  readVerification,
  VERIFICATION_VERSION,
  verificationPath,
  verificationProblem,
  verificationText
} from "../../embedding/model-verification.js"
import { checkModel, type SanityResult } from "../../embedding/sanity.js"
import { redactUrlCredentials } from "../../embedding/url-display.js"
import { pathSwapped } from "../../fs/path-swapped.js"
import { removeVerified } from "../../fs/remove-verified.js"
import { type Entry, SafeFs } from "../../fs/safe-fs.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { fail, type StepFailure, type StepRun } from "../step.js"
import { ownedPathFailure } from "./owned-path-failure.js"
import { stepWithServices } from "./step-context.js"

const PRIVATE_DIR = 0o700
const PRIVATE_FILE = 0o600
const DOWNLOAD_ATTEMPTS = 4
const RERUN = "Run: blctx install codex --step embedding_model"

const fromFs = ownedPathFailure
// A JSON syntax error quotes the text around it, which may be an endpoint URL with a password.
const fromConfig = (e: ConfigError): StepFailure =>
  fail(
    redactUrlCredentials(`config ${e.path}${e.field === "" ? "" : ` field "${e.field}"`}: ${e.message}`),
    e.remediation
  )

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const isUnder = (root: string, path: string) => path.startsWith(`${root}${NodePath.sep}`)
/** Every URL this step prints goes through this: a password in it is never shown. */
const shown = redactUrlCredentials

/** A check of the installed model failed: `failure` is kept in the verification record, `step` is reported. */
interface CheckFailure {
  readonly failure: string
  readonly step: StepFailure
}

/** The config file's path and the model settings read from it. */
interface Loaded {
  readonly configPath: string
  readonly config: BlctxConfig
}

const loadConfig = Effect.flatMap(ConfigFile, (configFile) =>
  configFile.load().pipe(
    Effect.map((config): Loaded => ({ configPath: configFile.path, config })),
    Effect.mapError(fromConfig)
  )
)
const now = DateTime.now.pipe(Effect.map(DateTime.formatIso))
const modelsRootDir = Effect.map(Paths, (paths) => modelsRoot(paths.cacheDir))

/** How to fetch the model from elsewhere: the one setting every download remedy names. */
const mirrorHint = (configPath: string) =>
  `to download from a mirror or a local server, set "model": {"endpoint": "URL"} in ${configPath} (files are fetched from URL/<repo>/resolve/<revision>/<name>)`

/** Where the files were fetched from, whether config.json chose it, and how to choose another. */
const endpointNote = ({ configPath, config }: Loaded) =>
  config.modelOverrides.includes("endpoint")
    ? `model.endpoint in ${configPath} points at ${shown(config.model.endpoint)}; check it or remove it to use the default.`
    : `It tried the default endpoint ${shown(config.model.endpoint)}; ${mirrorHint(configPath)}.`

/** What install would download, and from where. */
const downloadNote = ({ configPath, config }: Loaded) =>
  `it downloads ${mib(config.model.files.reduce((n, f) => n + f.size, 0))} from ${shown(config.model.endpoint)}${config.modelOverrides.includes("endpoint") ? ` (model.endpoint in ${configPath})` : `; ${mirrorHint(configPath)}`}`

/**
 * The `lstat` of every file of `folder` (taken before hashing), or the first file whose size or
 * SHA-256 differs from the spec.
 */
const inspect = (folder: string, files: ReadonlyArray<ModelFile>) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const digests = yield* FileDigest
    const entries: Array<Entry> = []
    for (const file of files) {
      const path = NodePath.join(folder, file.name)
      const entry = yield* fs.lstat(path).pipe(Effect.mapError(fromFs))
      if (Option.isNone(entry)) return Either.left(`${path} is missing`)
      if (entry.value.kind !== "file") return Either.left(`${path} is not a regular file`)
      if (entry.value.size !== file.size) {
        return Either.left(`${path} has ${entry.value.size} bytes; the pin says ${file.size}`)
      }
      const digest = yield* digests.sha256(path).pipe(
        // The digest opens without following links: ELOOP means a link took the file's place.
        Effect.mapError((e) =>
          fromFs(e.code === "ELOOP" || e.code === "EMLINK" ? pathSwapped(path, "symbolic_link") : e)
        )
      )
      if (digest.sha256 !== file.sha256) {
        return Either.left(`${path} has SHA-256 ${digest.sha256}; the pin says ${file.sha256}`)
      }
      entries.push(entry.value)
    }
    return Either.right(entries)
  })

const ensureDirectory = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const entry = yield* fs.lstat(dir).pipe(Effect.mapError(fromFs))
    if (Option.isSome(entry)) {
      if (entry.value.kind === "directory") return
      return yield* fail(`${dir} exists and is not a directory`, `Move ${dir} aside, then rerun.`)
    }
    yield* fs.makeDirectory(dir, PRIVATE_DIR).pipe(Effect.mapError(fromFs))
  })

/** Records every path the step may create, before creating any of them. */
const recordArtifacts = (spec: ModelSpec) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const manifests = yield* ManifestStore
    const root = modelsRoot(paths.cacheDir)
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
    const files = [
      ...spec.files.flatMap((f) => [
        NodePath.join(staging, f.name),
        NodePath.join(staging, partFileName(f.name)),
        NodePath.join(active, f.name)
      ]),
      verificationPath(active)
    ]
    const m = manifest.value
    const ownedFiles = [...new Set([...m.owned_files, ...files])]
    const directories = [...new Set([...m.created_directories, root, staging, active])]
    if (ownedFiles.length === m.owned_files.length && directories.length === m.created_directories.length) return
    yield* manifests
      .write(new Manifest({ ...m, owned_files: ownedFiles, created_directories: directories, updated_at: yield* now }))
      .pipe(Effect.mapError(fromFs))
  })

/** What the failed download left on disk, said as it is. */
const leftOnDisk = (part: string, name: string) =>
  Effect.flatMap(SafeFs, (fs) => fs.lstat(part)).pipe(
    Effect.orElseSucceed(() => Option.none<Entry>()),
    Effect.map((entry) =>
      Option.isSome(entry) && entry.value.kind === "file" && entry.value.size > 0
        ? `The partial file ${part} (${entry.value.size} bytes) is kept and resumed next time.`
        : `No partial file of ${name} is on disk; the next run starts it from the beginning.`
    )
  )

/**
 * Fetches one file into its `.part` file (resuming what is there, retrying what may pass on a
 * retry), reporting progress over the whole download; a failure says what was left on disk.
 */
const fetchPart = (run: StepRun, loaded: Loaded, file: ModelFile, part: string, at: { done: number; total: number }) =>
  Effect.gen(function* () {
    const downloader = yield* Downloader
    const spec = loaded.config.model
    const url = modelFileUrl(spec, file.name)
    return yield* downloader
      .fetch({
        url,
        part,
        size: file.size,
        onProgress: (bytes) =>
          run.progress({
            label: `downloading ${file.name} (${mib(at.done + bytes)} of ${mib(at.total)})`,
            fraction: at.total === 0 ? 1 : (at.done + bytes) / at.total
          })
      })
      .pipe(
        Effect.retry({ times: DOWNLOAD_ATTEMPTS - 1, while: (e) => e.retryable }),
        Effect.catchAll((e) =>
          Effect.flatMap(leftOnDisk(part, file.name), (onDisk) =>
            Effect.fail(
              fail(
                `download of ${shown(url)} failed: ${shown(e.message)}`,
                [
                  e.retryable
                    ? `Check the network and rerun (${RERUN}).`
                    : `Rerun once the endpoint serves revision ${spec.revision} of ${spec.repo} (${RERUN}).`,
                  onDisk,
                  endpointNote(loaded)
                ].join(" ")
              )
            )
          )
        )
      )
  })

/** Moves a fetched `.part` file into place when its size and SHA-256 are the pin's; discards it otherwise. */
const acceptPart = (loaded: Loaded, file: ModelFile, part: string, target: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const digests = yield* FileDigest
    const spec = loaded.config.model
    const digest = yield* digests.sha256(part).pipe(Effect.mapError(fromFs))
    if (digest.size !== file.size || digest.sha256 !== file.sha256) {
      yield* fs.removeFile(part).pipe(Effect.mapError(fromFs))
      return yield* fail(
        `${shown(modelFileUrl(spec, file.name))} served ${digest.size} bytes with SHA-256 ${digest.sha256}; the pin is ${file.size} bytes, ${file.sha256}. The file was discarded.`,
        `Rerun once the endpoint serves revision ${spec.revision} of ${spec.repo} (${RERUN}). ${endpointNote(loaded)}`
      )
    }
    yield* fs.renameDurable(part, target).pipe(Effect.mapError(fromFs))
  })

/** Whether a file already in staging is intact; one that is not is removed, to be fetched again. */
const alreadyStaged = (staging: string, file: ModelFile, target: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    if (!(yield* fs.exists(target))) return false
    if (Either.isRight(yield* inspect(staging, [file]))) return true
    yield* fs.removeFile(target).pipe(Effect.mapError(fromFs))
    return false
  })

/** Downloads the spec's files into `staging`, each checked against its pin; how much was fetched and resumed. */
const download = (run: StepRun, loaded: Loaded, staging: string) =>
  Effect.gen(function* () {
    const spec = loaded.config.model
    const at = { done: 0, total: spec.files.reduce((n, f) => n + f.size, 0) }
    let fetched = 0
    let resumed = 0
    for (const file of spec.files) {
      const target = NodePath.join(staging, file.name)
      const part = NodePath.join(staging, partFileName(file.name))
      if (!(yield* alreadyStaged(staging, file, target))) {
        const result = yield* fetchPart(run, loaded, file, part, at)
        resumed += result.resumedFrom
        fetched += file.size - result.resumedFrom
        yield* acceptPart(loaded, file, part, target)
      }
      at.done += file.size
    }
    return { fetched, resumed }
  })

/** Replaces the active folder (and its verification record) by the checked staging folder in one rename. */
const activate = (spec: ModelSpec, staging: string, active: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    if (yield* fs.exists(active)) {
      yield* fs.removeFile(verificationPath(active)).pipe(Effect.mapError(fromFs))
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

/** Loads the model in `folder` and runs the spec's sanity check (offline). */
const sanity = (run: StepRun, folder: string, spec: ModelSpec) =>
  Effect.scoped(
    Effect.gen(function* () {
      const runtime = yield* ModelRuntime
      const configFile = yield* ConfigFile
      yield* run.progress({ label: "loading model", fraction: 0.5 })
      const embedder = yield* runtime.load(folder, spec).pipe(
        Effect.mapError(
          (e): CheckFailure => ({
            failure: `the model could not be loaded: ${e.message}`,
            step: fail(`cannot load the model in ${e.folder}: ${e.message}`, e.remediation)
          })
        )
      )
      yield* run.progress({ label: "verifying", fraction: 0.75 })
      return yield* checkModel(embedder, spec).pipe(
        Effect.mapError(
          (e): CheckFailure => ({
            failure: e.message,
            step: fail(
              `model check failed: ${e.message}`,
              e._tag === "EmbedError"
                ? RERUN
                : `The model in ${folder} does not behave as its spec says; check "model" in ${configFile.path}. Until this step passes, the daemon does not use the model and search stays lexical.`
            )
          })
        )
      )
    })
  )

/** The record of this run's checks, written atomically and private. */
const writeRecord = (
  folder: string,
  spec: ModelSpec,
  files: ReadonlyArray<CheckedFile>,
  result: ModelVerification["result"]
) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const fingerprint = fingerprintOf(spec)
    const record = new ModelVerification({
      version: VERIFICATION_VERSION,
      fingerprint: fingerprint.key,
      model: fingerprint.label,
      checked_at: yield* now,
      files,
      sanity: spec.sanity,
      result
    })
    yield* fs
      .writeAtomic(verificationPath(folder), verificationText(record), PRIVATE_FILE)
      .pipe(Effect.mapError(fromFs))
  })

const recordFailure = (folder: string, spec: ModelSpec, failure: string) =>
  writeRecord(folder, spec, [], { _tag: "failed", failure })

/**
 * Runs the model checks on the active folder whose files `inspect` found intact, and records
 * the outcome. A file that changed while it was checked is a failure too.
 */
const certify = (run: StepRun, active: string, spec: ModelSpec, entries: ReadonlyArray<Entry>) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const result = yield* sanity(run, active, spec).pipe(
      Effect.catchAll((e) => Effect.zipRight(recordFailure(active, spec, e.failure), Effect.fail(e.step)))
    )
    const files: Array<CheckedFile> = []
    for (const [i, file] of spec.files.entries()) {
      const path = NodePath.join(active, file.name)
      const before = entries[i]
      const after = yield* fs.lstat(path).pipe(Effect.mapError(fromFs))
      if (
        before === undefined ||
        Option.isNone(after) ||
        after.value.ino !== before.ino ||
        after.value.size !== before.size ||
        after.value.mtimeMs !== before.mtimeMs
      ) {
        const failure = `${path} changed while it was checked`
        yield* recordFailure(active, spec, failure)
        return yield* fail(failure, `Leave ${active} alone while the step runs, then rerun (${RERUN}).`)
      }
      files.push({ name: file.name, size: file.size, sha256: file.sha256, mtime_ms: before.mtimeMs })
    }
    yield* writeRecord(active, spec, files, {
      _tag: "passed",
      first: result.first,
      score: result.scores[result.first] ?? 0
    })
    return result
  })

const install = Effect.fn("EmbeddingModel.install")(function* (run: StepRun) {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const loaded = yield* loadConfig
  const spec = loaded.config.model
  const active = activeModelFolder(paths.cacheDir, spec)
  yield* run.progress({ label: "checking cache", fraction: 0 })
  yield* recordArtifacts(spec)
  const cached = (yield* fs.exists(active)) ? yield* inspect(active, spec.files) : Either.left(`${active} is missing`)
  if (Either.isRight(cached)) {
    yield* certify(run, active, spec, cached.right)
    return { detail: `model already in ${active}` }
  }
  // The folder's files are not what was checked: nothing may use them until a run passes.
  if (yield* fs.exists(active)) yield* recordFailure(active, spec, cached.left)
  const staging = stagingModelFolder(paths.cacheDir, spec)
  yield* ensureDirectory(modelsRoot(paths.cacheDir))
  yield* ensureDirectory(staging)
  const { fetched, resumed } = yield* download(run, loaded, staging)
  yield* activate(spec, staging, active)
  const activated = yield* inspect(active, spec.files)
  if (Either.isLeft(activated)) {
    yield* recordFailure(active, spec, activated.left)
    return yield* fail(activated.left, RERUN)
  }
  yield* certify(run, active, spec, activated.right)
  const resumedNote = resumed > 0 ? `, resumed ${mib(resumed)}` : ""
  return { detail: `downloaded ${mib(fetched)}${resumedNote}; verified and activated ${active}` }
})

const verify = Effect.fn("EmbeddingModel.verify")(function* (run: StepRun) {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const loaded = yield* loadConfig
  const spec = loaded.config.model
  const active = activeModelFolder(paths.cacheDir, spec)
  yield* run.progress({ label: "checking files", fraction: 0 })
  if (!(yield* fs.exists(active))) {
    return yield* fail(
      `the embedding model ${spec.repo}@${spec.revision.slice(0, 12)} is not installed (no ${active})`,
      `${RERUN} (${downloadNote(loaded)})`
    )
  }
  const inspected = yield* inspect(active, spec.files)
  if (Either.isLeft(inspected)) return yield* fail(inspected.left, RERUN)
  const result: SanityResult = yield* sanity(run, active, spec).pipe(Effect.catchAll((e) => Effect.fail(e.step)))
  const fingerprint = fingerprintOf(spec)
  const stored = yield* readVerification(fs, active).pipe(Effect.mapError(fromFs))
  const problem = verificationProblem(
    stored,
    spec,
    fingerprint,
    active,
    inspected.right.map((e) => Option.some(e))
  )
  if (Option.isSome(problem)) {
    return yield* fail(
      `the model passes its checks now, but the daemon does not use it until a run of this step records them: ${problem.value}`,
      RERUN
    )
  }
  const score = result.scores[result.first] ?? 0
  return {
    detail: `${fingerprint.model}@${fingerprint.revision.slice(0, 12)}, ${result.dims} dims, fingerprint ${fingerprint.key}; sanity check ranked passage ${result.first} first (${score.toFixed(3)})`
  }
})

/** One file of the spec in `folder`: present at its size, at another size, or missing. */
const fileState = (folder: string, file: ModelFile, part: boolean) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const path = NodePath.join(folder, part ? partFileName(file.name) : file.name)
    const entry = yield* fs.lstat(path).pipe(Effect.orElseSucceed(() => Option.none<Entry>()))
    if (Option.isNone(entry)) return { file, path, size: null }
    return { file, path, size: entry.value.kind === "file" ? entry.value.size : -1 }
  })

/**
 * Doctor: what of the model is on disk and what is not (per file of the spec: in the active
 * folder, downloaded or partly downloaded in staging), where it looked, and what to do,
 * including how to fetch from a mirror. Reads metadata only; nothing is hashed or fetched.
 */
const diagnose = Effect.fn("EmbeddingModel.diagnose")(function* () {
  const paths = yield* Paths
  const loaded = yield* loadConfig
  const spec = loaded.config.model
  const active = activeModelFolder(paths.cacheDir, spec)
  const staging = stagingModelFolder(paths.cacheDir, spec)
  const installed = yield* Effect.forEach(spec.files, (f) => fileState(active, f, false))
  const wrong = installed.filter((f) => f.size !== null && f.size !== f.file.size)
  const missing = installed.filter((f) => f.size === null)
  const looked = `${spec.repo}@${spec.revision.slice(0, 12)}: ${spec.files.length} files, ${mib(spec.files.reduce((n, f) => n + f.size, 0))}`
  if (missing.length === 0 && wrong.length === 0) {
    return { detail: `${looked}; every file is in ${active} at its pinned size` }
  }
  const said: Array<string> = [looked]
  if (wrong.length > 0) {
    said.push(
      `in ${active} at another size than pinned: ${wrong.map((f) => `${f.file.name} (${f.size} bytes, pinned ${f.file.size})`).join(", ")}`
    )
  }
  if (missing.length > 0) {
    said.push(`missing from ${active}: ${missing.map((f) => f.file.name).join(", ")}`)
    const staged = yield* Effect.forEach(missing, (f) =>
      Effect.zip(fileState(staging, f.file, false), fileState(staging, f.file, true))
    )
    const waiting = staged.flatMap(([done, part]) =>
      done.size !== null
        ? [`${done.file.name} downloaded, not yet activated`]
        : part.size !== null && part.size >= 0
          ? [
              part.size > part.file.size
                ? `${part.path} has ${part.size} bytes, more than the pinned ${part.file.size}: the next run discards it`
                : `${part.path} has ${part.size} of ${part.file.size} bytes: the next run resumes it`
            ]
          : []
    )
    said.push(waiting.length === 0 ? `nothing of them in ${staging}` : `in ${staging}: ${waiting.join("; ")}`)
  }
  said.push(`to fix: ${RERUN} (${downloadNote(loaded)})`)
  return { detail: said.join("; ") }
})

const uninstall = Effect.fn("EmbeddingModel.uninstall")(function* (run: StepRun) {
  const fs = yield* SafeFs
  const manifests = yield* ManifestStore
  const root = yield* modelsRootDir
  if (!run.purge) return { detail: `model kept in ${root} for reuse (--purge removes it)` }
  const manifest = yield* manifests
    .read()
    .pipe(
      Effect.mapError(() => fail(`manifest ${manifests.path} is unreadable`, "Run: blctx doctor --step data_directory"))
    )
  if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest" }
  const m = manifest.value
  const files = m.owned_files.filter((f) => isUnder(root, f))
  const directories = m.created_directories.filter((d) => d === root || isUnder(root, d))
  let removed = 0
  for (const file of files) {
    const entry = yield* fs.lstat(file).pipe(Effect.mapError(fromFs))
    if (Option.isSome(entry) && entry.value.kind === "file") {
      // Only the file just checked: a link or another file swapped in since is refused.
      yield* removeVerified(file, entry.value).pipe(Effect.provideService(SafeFs, fs), Effect.mapError(fromFs))
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

/**
 * The local embedding model: downloads the spec's files into the cache (resumable, `.part`
 * files), checks the size and SHA-256 of every file, activates the folder with one atomic
 * rename, then loads the model and runs the spec's sanity check. Only when every check passed
 * does install record a verification in the folder (`.blctx-verification.json`); the daemon
 * embeds with a model only while that record matches it, so a model that failed a check is
 * never used. Everything it creates is recorded in the manifest first, so `--purge` removes
 * exactly that.
 */
export const embeddingModelStep = stepWithServices(
  { id: "embedding_model", title: "Local embedding model", requires: ["data_directory"] },
  { install, verify, diagnose: () => diagnose(), uninstall }
)
