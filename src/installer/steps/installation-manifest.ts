import { Effect, Option } from "effect"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { describeError, fail } from "../step.js"

/**
 * The manifest as the steps around the daemon read it: an unreadable one is a failure naming
 * the error and pointing at the data step.
 */
export const readInstallationManifest = Effect.flatMap(ManifestStore, (manifests) =>
  manifests
    .read()
    .pipe(
      Effect.mapError((e) =>
        fail(
          `manifest ${manifests.path} is unreadable (${describeError(e)})`,
          "Check it: blctx status --step data_directory",
          e._tag
        )
      )
    )
)

/** The active installation's manifest; none or an inactive one fails with `notInstalled(manifest path)`. */
export const activeInstallationManifest = (notInstalled: (path: string) => string) =>
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const manifest = yield* readInstallationManifest
    if (Option.isNone(manifest) || manifest.value.state !== "active") {
      return yield* fail(notInstalled(manifests.path), "Run: blctx install codex")
    }
    return manifest.value
  })
