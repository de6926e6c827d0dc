import { Duration, Effect, Option } from "effect"
import { lockFileIn } from "../../daemon/daemon-files.js"
import { SafeFs } from "../../fs/safe-fs.js"
import type { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { DaemonConnector } from "../../rpc/daemon-connector.js"
import { type ServiceError, ServiceManager } from "../../service/service-manager.js"
import { makeServiceSpec } from "../../service/service-spec.js"
import { ProgramPaths } from "../program-paths.js"
import { fail, type Step } from "../step.js"

const IDENTITY_TIMEOUT = Duration.seconds(2)

const fromService = (e: ServiceError) => fail(e.detail, e.remediation)

/**
 * blctxd under a service manager. Verify checks active ownership, the unit's exact content,
 * that it is enabled, that the running process is the unit's command, the socket's mode, and
 * the daemon's identity over the protocol. Uninstall stops it and removes unit and socket
 * before the data step gives up ownership.
 */
export const backgroundServiceStep = Effect.gen(function* () {
  const manager = yield* ServiceManager
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const connector = yield* DaemonConnector
  const fs = yield* SafeFs

  const specOf = (m: Manifest) =>
    makeServiceSpec({ installationId: m.installation_id, paths, node: programs.node, daemon: programs.daemon })

  const readManifest = manifests
    .read()
    .pipe(
      Effect.mapError(() => fail(`manifest ${manifests.path} is unreadable`, "Run: blctx doctor --step data_directory"))
    )

  const activeManifest = Effect.gen(function* () {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) {
      return yield* fail(`no manifest at ${manifests.path}: blctx is not installed`, "Run: blctx install codex")
    }
    if (manifest.value.state !== "active") {
      return yield* fail(
        `installation ${manifest.value.installation_id} is inactive (uninstalled)`,
        "Run: blctx install codex"
      )
    }
    return manifest.value
  })

  const install = Effect.fn("BackgroundService.install")(function* () {
    const m = yield* activeManifest
    yield* manager.install(specOf(m)).pipe(Effect.mapError(fromService))
    return { detail: `started blctxd under the ${manager.description}` }
  })

  const verify = Effect.fn("BackgroundService.verify")(function* () {
    const m = yield* activeManifest
    const spec = specOf(m)
    const reinstall = "Run: blctx install codex --step background_service"
    const status = yield* manager.status(spec).pipe(Effect.mapError(fromService))
    if (Option.isNone(status.unitContent)) {
      return yield* fail(`${status.unitPath} does not exist (${manager.description})`, reinstall)
    }
    if (status.unitContent.value !== status.expectedUnit) {
      return yield* fail(`${status.unitPath} differs from what this version of blctx writes`, reinstall)
    }
    if (!status.enabled) return yield* fail(`${spec.name} is not enabled (${manager.description})`, reinstall)
    if (!status.active || Option.isNone(status.mainPid)) {
      return yield* fail(`blctxd is not running (${manager.description})`, reinstall)
    }
    const pid = status.mainPid.value
    const argv = Option.getOrElse(status.commandLine, () => [] as ReadonlyArray<string>)
    if (argv.join("\0") !== spec.command.join("\0")) {
      return yield* fail(
        `the running blctxd (PID ${pid}) was started as \`${argv.join(" ")}\`, not as the unit says`,
        reinstall
      )
    }
    const socket = yield* fs.lstat(spec.socketPath).pipe(Effect.mapError((e) => fail(e.message, reinstall)))
    if (Option.isNone(socket) || socket.value.kind !== "socket") {
      return yield* fail(`${spec.socketPath} is missing or not a socket`, reinstall)
    }
    if (socket.value.mode !== 0o600) {
      return yield* fail(
        `${spec.socketPath} has mode ${socket.value.mode.toString(8).padStart(4, "0")}; blctx requires 0600`,
        reinstall
      )
    }
    const identity = yield* connector
      .withClient({ socketPath: spec.socketPath, timeout: IDENTITY_TIMEOUT }, (client) => client.ping())
      .pipe(Effect.mapError((e) => fail(e.message, e.remediation)))
    if (identity.installation_id !== m.installation_id || identity.db_path !== paths.database) {
      return yield* fail(
        `the daemon on ${spec.socketPath} serves installation ${identity.installation_id} (${identity.db_path}), not ${m.installation_id} (${paths.database})`,
        reinstall
      )
    }
    if (identity.pid !== pid) {
      return yield* fail(`the socket is served by PID ${identity.pid}, but the service's process is ${pid}`, reinstall)
    }
    return { detail: `blctxd PID ${pid} under the ${manager.description}; socket ${spec.socketPath} (0600)` }
  })

  const uninstall = Effect.fn("BackgroundService.uninstall")(function* (purge: boolean) {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) return { detail: "nothing to stop: no manifest" }
    const spec = specOf(manifest.value)
    yield* manager.uninstall(spec).pipe(Effect.mapError(fromService))
    const after = yield* manager.status(spec).pipe(Effect.mapError(fromService))
    if (Option.isSome(after.mainPid)) {
      return yield* fail(`blctxd PID ${after.mainPid.value} is still running`, `Stop it: kill ${after.mainPid.value}`)
    }
    if (purge) {
      // The daemon is stopped, so its lock, pidfile and log can go with the rest of the data.
      for (const file of [
        spec.logFile,
        spec.pidFile,
        lockFileIn(paths.dataDir),
        `${lockFileIn(paths.dataDir)}-journal`
      ]) {
        yield* fs
          .removeFile(file)
          .pipe(Effect.mapError((e) => fail(`cannot remove ${file}: ${e.code}`, `Remove ${file} by hand.`)))
      }
    }
    return { detail: `stopped blctxd and removed its unit and socket; supervisor: ${manager.description}` }
  })

  return {
    id: "background_service",
    title: "Background service (blctxd)",
    requires: ["data_directory"],
    install: () => install(),
    verify: () => verify(),
    uninstall: (run) => uninstall(run.purge)
  } satisfies Step
})
