import { Effect, Layer, Option } from "effect"
import { checkOwnership } from "../fs/ownership.js"
import { SafeFs } from "../fs/safe-fs.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { lockFileIn, pidFileIn } from "../paths/daemon-files.js"
import { Paths } from "../paths/paths.js"
import { DaemonConfig } from "./daemon-config.js"
import { DaemonStartupError } from "./daemon-errors.js"
import { WriterLock } from "./writer-lock.js"

export const startupError = (reason: string, remediation: string) => new DaemonStartupError({ reason, remediation })

/** Reads the PID recorded by the lock holder, if any (used to name it in a refusal). */
export const readPidFile = (path: string) =>
  Effect.flatMap(SafeFs, (fs) => fs.readText(path)).pipe(
    Effect.map((text) => {
      const pid = Number.parseInt(text.trim(), 10)
      return Number.isSafeInteger(pid) && pid > 0 ? Option.some(pid) : Option.none<number>()
    }),
    Effect.orElseSucceed(() => Option.none<number>())
  )

/**
 * The folders blctxd writes (database, socket, spool) are still only this user's: no folder or
 * link on the way to them another user owns or could swap (checkOwnership), as at install.
 */
const checkOwnedFolders = Effect.gen(function* () {
  const paths = yield* Paths
  for (const dir of [paths.dataDir, paths.stateDir]) {
    yield* checkOwnership(dir).pipe(
      Effect.mapError((e) =>
        e._tag === "OwnershipProblem"
          ? startupError(e.detail, e.remediation)
          : startupError(`could not inspect ${e.path}: ${e.message}`, "Run: blctx doctor --step data_directory")
      )
    )
  }
})

/** The manifest names this installation and it is active, and its folders are yours: blctxd serves nothing else. */
export const InstallationChecked = Layer.effectDiscard(
  Effect.gen(function* () {
    yield* checkOwnedFolders
    const args = yield* DaemonConfig
    const manifests = yield* ManifestStore
    const manifest = yield* manifests
      .read()
      .pipe(
        Effect.mapError((e) =>
          startupError(`manifest ${e.path} cannot be read (${e._tag})`, "Run: blctx doctor --step data_directory")
        )
      )
    if (Option.isNone(manifest)) {
      return yield* startupError(`no blctx manifest at ${manifests.path}`, "Run: blctx install codex")
    }
    const m = manifest.value
    if (m.installation_id !== args["installation-id"]) {
      return yield* startupError(
        `the manifest names installation ${m.installation_id}, but blctxd was started for ${args["installation-id"]}`,
        "Reinstall the service so it matches: blctx install codex --step background_service"
      )
    }
    if (m.state !== "active") {
      return yield* startupError(
        `installation ${m.installation_id} is inactive (uninstalled); blctxd serves only an active installation`,
        "Run: blctx install codex"
      )
    }
  })
)

/** The data directory's exclusive writer lock, held for the daemon's life (after the installation check). */
export const WriterLockHeld = Layer.scopedDiscard(
  Effect.gen(function* () {
    const paths = yield* Paths
    const lock = yield* WriterLock
    const lockFile = lockFileIn(paths.dataDir)
    yield* lock.acquire(lockFile).pipe(
      Effect.catchTags({
        WriterLockHeld: () =>
          Effect.flatMap(readPidFile(pidFileIn(paths.stateDir)), (holder) =>
            Effect.fail(
              startupError(
                `another blctxd (PID ${Option.match(holder, { onNone: () => "unknown", onSome: String })}) holds the writer lock on ${paths.dataDir}`,
                "Only one daemon may serve a data directory; use the running one, or stop it first (blctx uninstall codex)."
              )
            )
          ),
        WriterLockError: (e) =>
          Effect.fail(
            startupError(`cannot take the writer lock ${e.lockFile}: ${e.message}`, "Check the data directory.")
          )
      })
    )
    yield* Effect.logInfo("writer lock held").pipe(Effect.annotateLogs({ lock: lockFile }))
  })
).pipe(Layer.provide(InstallationChecked))
