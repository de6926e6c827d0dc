import { DateTime, Effect, Option } from "effect"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { fail, type Step } from "../step.js"

/**
 * Hook installation is not built in this version. Whoever wants the hooks (asked for, or the
 * non-interactive default) gets this failure from install AND from status, so both agree. The
 * remediation names a complete command, never a bare flag the running command may not accept.
 */
export const HOOKS_NOT_BUILT = fail(
  "not implemented yet",
  "Codex hook installation is not built in this version of blctx, so no hooks were installed. To go without them and record that choice: blctx install codex --no-hooks"
)

export const DECLINED_DETAIL = "optional hooks declined (explicit choice recorded at install)"

/**
 * The optional Codex hooks. What counts is the choice recorded in the manifest, so install and a
 * later status always report the same: declining is recorded and passes; asking for the hooks
 * (`--hooks`, yes at the prompt, or the non-interactive default) clears an earlier decline and,
 * since installing them is not built yet, fails in both; `default` (nobody was asked) keeps
 * whatever an earlier install recorded.
 */
export const codexHooksStep = Effect.gen(function* () {
  const manifests = yield* ManifestStore
  const readManifest = manifests
    .read()
    .pipe(
      Effect.mapError((e) =>
        fail(`manifest ${manifests.path} is unreadable (${e._tag})`, "Check it: blctx status --step data_directory")
      )
    )
  const declined = Effect.map(
    readManifest,
    Option.exists((m) => m.choices.hooks === "declined")
  )
  const record = (hooks: "declined" | undefined) =>
    Effect.gen(function* () {
      const manifest = yield* readManifest
      if (Option.isNone(manifest)) {
        return yield* fail("no manifest to record the choice in", "Run: blctx install codex")
      }
      const m = manifest.value
      if (m.choices.hooks === hooks) return
      const { hooks: _previous, ...others } = m.choices
      yield* manifests
        .write(
          new Manifest({
            ...m,
            choices: hooks === undefined ? others : { ...others, hooks },
            updated_at: DateTime.formatIso(yield* DateTime.now)
          })
        )
        .pipe(
          Effect.mapError((e) =>
            fail(`could not record the choice in ${manifests.path}: ${e.message}`, "Check the state directory.")
          )
        )
    })

  const verify = Effect.flatMap(declined, (isDeclined) =>
    isDeclined ? Effect.succeed({ detail: DECLINED_DETAIL }) : Effect.fail(HOOKS_NOT_BUILT)
  )

  const step: Step = {
    id: "codex_hooks",
    title: "Codex lifecycle hooks (optional)",
    requires: ["data_directory"],
    install: (run) =>
      Effect.gen(function* () {
        switch (run.hooks) {
          case "decline":
            yield* record("declined")
            return { detail: DECLINED_DETAIL }
          case "install":
            // The latest explicit wish replaces an earlier decline, so status reports what install did.
            yield* record(undefined)
            return yield* HOOKS_NOT_BUILT
          case "default":
            return yield* verify
        }
      }),
    verify: () => verify,
    uninstall: () =>
      Effect.succeed({
        detail: "nothing to remove: no hooks were installed (hook installation is not built in this version)"
      })
  }
  return step
})
