import * as NodePath from "node:path"
import { Data, Effect, Option } from "effect"
import { ConfigFile } from "../config/config-file.js"
import { SafeFs } from "../fs/safe-fs.js"
import { Paths } from "../paths/paths.js"
import { fingerprintOf, type ModelFingerprint } from "./fingerprint.js"
import { activeModelFolder } from "./model-location.js"
import { ModelRuntime } from "./model-runtime.js"

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
    return "Run: blctx install codex --step embedding_model"
  }
}

/**
 * The model the configuration names, as installed by the embedding_model step. `load` opens it
 * for a scope (the daemon's embedder); `check` only says whether it is there. Files are checked
 * by size here; SHA-256 was checked before the folder was activated.
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
      }
      return { spec, folder, fingerprint }
    })

    const load = Effect.fn("InstalledModel.load")(function* () {
      const { spec, folder } = yield* check()
      return yield* runtime.load(folder, spec)
    })

    return { check, load } as const
  })
}) {}
