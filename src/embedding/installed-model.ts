import * as NodePath from "node:path"
import { Data, Effect, Option } from "effect"
import { ConfigFile } from "../config/config-file.js"
import { SafeFs } from "../fs/safe-fs.js"
import { Paths } from "../paths/paths.js"
import { fingerprintOf, type ModelFingerprint } from "./fingerprint.js"
import { activeModelFolder } from "./model-location.js"
import { ModelRuntime } from "./model-runtime.js"
import { readVerification, verificationProblem } from "./model-verification.js"

const INSTALL_STEP = "Run: blctx install codex --step embedding_model"

/**
 * The configured model is not in the cache (or not complete). Indexing goes on lexically and
 * marks vectors pending; nothing is downloaded outside the embedding_model step.
 */
export class ModelNotInstalled extends Data.TaggedError("ModelNotInstalled")<{
  readonly folder: string
  readonly fingerprint: ModelFingerprint
  readonly reason: string
}> {
  get remediation(): string {
    return INSTALL_STEP
  }
}

/**
 * The model's files are there, but the embedding_model step has not recorded that they passed
 * every check (sizes, SHA-256, the sanity check) as they are now: it never ran its checks, a
 * check failed (`reason` says which), or the files or the sanity check changed since.
 */
export class ModelNotVerified extends Data.TaggedError("ModelNotVerified")<{
  readonly folder: string
  readonly fingerprint: ModelFingerprint
  readonly reason: string
}> {
  get remediation(): string {
    return INSTALL_STEP
  }
}

/**
 * The model the configuration names, as installed and checked by the embedding_model step.
 * `load` opens it for a scope (the daemon's embedder); `check` only says whether it may be used.
 * Both are cheap: sizes and modification times are compared with the step's verification record
 * (which the step writes only after sizes, SHA-256 and the sanity check passed); nothing is hashed.
 */
export class InstalledModel extends Effect.Service<InstalledModel>()("blctx/InstalledModel", {
  effect: Effect.gen(function* () {
    const fs = yield* SafeFs
    const paths = yield* Paths
    const config = yield* ConfigFile
    const runtime = yield* ModelRuntime

    const check = Effect.fn("InstalledModel.check")(function* () {
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
      return { spec, folder, fingerprint }
    })

    const load = Effect.fn("InstalledModel.load")(function* () {
      const { spec, folder } = yield* check()
      return yield* runtime.load(folder, spec)
    })

    return { check, load } as const
  })
}) {}
