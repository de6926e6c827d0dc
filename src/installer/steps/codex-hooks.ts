import { DateTime, Effect, Option } from "effect"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { fail, type Step } from "../step.js"

const notYet = fail(
  "not implemented yet",
  "Codex hook installation is not available in this version of blctx; rerun with --no-hooks to decline it."
)

/**
 * The optional Codex hooks. Declining them is an explicit, recorded, successful choice; installing
 * them is not built yet and reports so.
 */
export const codexHooksStep = Effect.gen(function* () {
  const manifests = yield* ManifestStore
  const readManifest = manifests
    .read()
    .pipe(
      Effect.mapError(() => fail(`manifest ${manifests.path} is unreadable`, "Run: blctx doctor --step data_directory"))
    )
  const declined = Effect.map(
    readManifest,
    Option.exists((m) => m.choices.hooks === "declined")
  )
  const declinedDetail = { detail: "optional hooks declined (explicit choice recorded at install)" }

  const step: Step = {
    id: "codex_hooks",
    title: "Codex lifecycle hooks (optional)",
    requires: ["data_directory"],
    install: (run) =>
      Effect.gen(function* () {
        if (run.hooks === "install") return yield* notYet
        const manifest = yield* readManifest
        if (Option.isNone(manifest))
          return yield* fail("no manifest to record the choice in", "Run: blctx install codex")
        yield* manifests
          .write(
            new Manifest({
              ...manifest.value,
              choices: { ...manifest.value.choices, hooks: "declined" },
              updated_at: DateTime.formatIso(yield* DateTime.now)
            })
          )
          .pipe(Effect.mapError((e) => fail(`could not record the choice: ${e.message}`, "Check the state directory.")))
        return declinedDetail
      }),
    verify: () => Effect.flatMap(declined, (isDeclined) => (isDeclined ? Effect.succeed(declinedDetail) : notYet)),
    uninstall: () => Effect.fail(notYet)
  }
  return step
})
