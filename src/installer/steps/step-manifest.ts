import { Effect, Option } from "effect"
import type { ManifestStore } from "../../ownership/manifest-store.js"
import { fail } from "../step.js"

/**
 * The manifest as a step reads it: unreadable is a failure pointing at the data step, and
 * `readActive` requires an active installation, naming the command that installs one.
 */
export const stepManifest = (manifests: ManifestStore, install: string) => {
  const read = manifests
    .read()
    .pipe(
      Effect.mapError((e) =>
        fail(`manifest ${manifests.path} is unreadable (${e._tag})`, "Check it: blctx status --step data_directory")
      )
    )

  const readActive = Effect.gen(function* () {
    const manifest = yield* read
    if (Option.isNone(manifest)) {
      return yield* fail(`blctx is not installed: no manifest at ${manifests.path}`, `Run: ${install}`)
    }
    if (manifest.value.state !== "active") {
      return yield* fail(`installation ${manifest.value.installation_id} is inactive (uninstalled)`, `Run: ${install}`)
    }
    return manifest.value
  })

  return { read, readActive } as const
}
