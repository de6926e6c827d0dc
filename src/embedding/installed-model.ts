import * as NodePath from "node:path"
import { Data, Effect, Option } from "effect"
import { CONFIG_FILE_NAME, ConfigFile } from "../config/config-file.js"
import type { ModelSpec } from "../domain/model-spec.js"
import { SafeFs } from "../fs/safe-fs.js"
import { Paths } from "../paths/paths.js"
import { fingerprintOf, type ModelFingerprint } from "./fingerprint.js"
import { activeModelFolder } from "./model-location.js"
import { ModelRuntime } from "./model-runtime.js"
import { readVerification, verificationPath, verificationProblem } from "./model-verification.js"

const INSTALL_STEP = "Run: blctx install codex --step embedding_model"

/** Which model folder cannot be used, and why. */
interface ModelProblem {
  readonly folder: string
  readonly fingerprint: ModelFingerprint
  readonly reason: string
}

/**
 * The configured model is not in the cache (or not complete). Indexing goes on lexically and
 * marks vectors pending; nothing is downloaded outside the embedding_model step.
 */
export class ModelNotInstalled extends Data.TaggedError("ModelNotInstalled")<ModelProblem> {
  get remediation(): string {
    return INSTALL_STEP
  }
}

/**
 * The model's files are there, but the embedding_model step has not recorded that they passed
 * every check (sizes, SHA-256, the sanity check) as they are now: it never ran its checks, a
 * check failed (`reason` says which), or the files or the sanity check changed since.
 */
export class ModelNotVerified extends Data.TaggedError("ModelNotVerified")<ModelProblem> {
  get remediation(): string {
    return INSTALL_STEP
  }
}

/**
 * The model the configuration names, as installed and checked by the embedding_model step.
 * `load` opens it for a scope (the daemon's embedder); `check` only says whether it may be used.
 * Both are cheap: sizes and modification times are compared with the step's verification record
 * (which the step writes only after sizes, SHA-256 and the sanity check passed); nothing is hashed.
 * A check that passed is remembered with the metadata of every file it read (the configuration,
 * the model's files, the record): while none of them changed, the next check only looks at them
 * again (`lstat`, all at once) instead of reading and decoding the configuration and the record;
 * a search checks the model every time.
 */
export class InstalledModel extends Effect.Service<InstalledModel>()("blctx/InstalledModel", {
  effect: Effect.gen(function* () {
    const fs = yield* SafeFs
    const paths = yield* Paths
    const config = yield* ConfigFile
    const runtime = yield* ModelRuntime

    const configPath = NodePath.join(paths.configDir, CONFIG_FILE_NAME)
    type Checked = { readonly spec: ModelSpec; readonly folder: string; readonly fingerprint: ModelFingerprint }
    /** What a check depends on, as metadata: the same metadata gives the same answer. */
    const metadataOf = (files: ReadonlyArray<string>) =>
      Effect.forEach(
        files,
        (path) =>
          fs.lstat(path).pipe(
            Effect.map(
              Option.match({
                onNone: () => "absent",
                onSome: (e) => `${e.kind} ${e.dev}:${e.ino} ${e.size} ${e.mtimeMs} ${e.mode} ${e.uid} ${e.nlink}`
              })
            ),
            Effect.orElseSucceed(() => "unreadable")
          ),
        { concurrency: "unbounded" }
      ).pipe(Effect.map((parts) => parts.join("\n")))
    let passed:
      | { readonly files: ReadonlyArray<string>; readonly metadata: string; readonly checked: Checked }
      | undefined

    const fullCheck = Effect.fn("InstalledModel.fullCheck")(function* () {
      const spec = (yield* config.load()).model
      const folder = activeModelFolder(paths.cacheDir, spec)
      const fingerprint = fingerprintOf(spec)
      const entries = []
      for (const file of spec.files) {
        const path = NodePath.join(folder, file.name)
        const entry = yield* fs.lstat(path).pipe(Effect.orElseSucceed(() => Option.none()))
        if (Option.isNone(entry) || entry.value.kind !== "file" || entry.value.size !== file.size) {
          return yield* new ModelNotInstalled({
            folder,
            fingerprint,
            reason: Option.isNone(entry) ? `${path} is missing` : `${path} is not the pinned file`
          })
        }
        entries.push(entry)
      }
      const stored = yield* readVerification(fs, folder).pipe(
        Effect.catchAll((e) => Effect.succeed({ _tag: "invalid", reason: `cannot read ${e.path}: ${e.code}` } as const))
      )
      const problem = verificationProblem(stored, spec, fingerprint, folder, entries)
      if (Option.isSome(problem)) return yield* new ModelNotVerified({ folder, fingerprint, reason: problem.value })
      return { spec, folder, fingerprint } satisfies Checked
    })

    const check = Effect.fn("InstalledModel.check")(function* () {
      const watched = passed?.files ?? [configPath]
      // Taken before the full check, so a change made while it reads is seen at the next check.
      const before = yield* metadataOf(watched)
      if (passed !== undefined && passed.metadata === before) return passed.checked
      const checked = yield* fullCheck().pipe(Effect.tapError(() => Effect.sync(() => (passed = undefined))))
      const files = [
        configPath,
        ...checked.spec.files.map((f) => NodePath.join(checked.folder, f.name)),
        verificationPath(checked.folder)
      ]
      // Other files than the ones looked at before: remembered with no metadata, so the next
      // check reads again and remembers what it looked at first.
      const same = files.length === watched.length && files.every((f, i) => f === watched[i])
      passed = { files, metadata: same ? before : "", checked }
      return checked
    })

    const load = Effect.fn("InstalledModel.load")(function* () {
      const { spec, folder } = yield* check()
      return yield* runtime.load(folder, spec)
    })

    return { check, load } as const
  })
}) {}
