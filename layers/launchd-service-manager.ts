import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Duration, Effect, Layer, Option } from "effect"
import { Launchctl, type LaunchctlError } from "../src/service/launchctl.js"
import { launchdLabel, renderPlist } from "../src/service/launchd-plist.js"
import { ServiceError, ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import { SUPERVISOR_START_WAIT } from "../src/service/start-bounds.js"
import {
  commandLineOf,
  findDaemonPids,
  logTail,
  pollUntil,
  removeSocketFile,
  socketAnswers,
  stopProcess
} from "./daemon-process-table.js"
import { LaunchctlLive } from "./launchctl-live.js"
import { writeAtomicLive } from "./node-safe-fs.js"

const POLL = Duration.millis(100)

const fromLaunchctl = (e: LaunchctlError) =>
  new ServiceError({
    detail: `${e.command} failed: ${e.detail}`,
    remediation:
      "launchctl needs your GUI login session (gui/<uid>): run blctx from a terminal of the logged-in user, or use the detached supervisor: BLCTX_SERVICE_MANAGER=detached blctx install codex"
  })

const readText = (path: string) => Option.liftThrowable(() => Fs.readFileSync(path, "utf8"))()

/**
 * A launchd user agent (macOS): `~/Library/LaunchAgents/dev.blctx.blctxd-<uuid>.plist`, loaded
 * into the user's GUI domain with `launchctl bootstrap`, restarted by launchd when it fails
 * (`KeepAlive.SuccessfulExit = false`: a daemon that exits 0 because it was uninstalled stays
 * down), logging to the state directory. launchd has no readiness protocol, so install returns
 * once the daemon's socket answers, as the detached supervisor does.
 */
export const makeLaunchdServiceManager = (launchAgentsDir: string) =>
  Layer.effect(
    ServiceManager,
    Effect.gen(function* () {
      const launchctl = yield* Launchctl
      const plistPathOf = (spec: ServiceSpec) => NodePath.join(launchAgentsDir, `${launchdLabel(spec)}.plist`)

      const writePlist = (spec: ServiceSpec) =>
        Effect.try({
          try: () => Fs.mkdirSync(launchAgentsDir, { recursive: true, mode: 0o700 }),
          catch: (e) => new Error(String(e))
        }).pipe(
          // launchd refuses an agent others can write; nothing in it is secret, but 0600 costs nothing.
          Effect.zipRight(writeAtomicLive(plistPathOf(spec), renderPlist(spec), 0o600)),
          Effect.mapError(
            (e) =>
              new ServiceError({
                detail: `cannot write ${plistPathOf(spec)}: ${e.message}`,
                remediation: "Check ~/Library/LaunchAgents."
              })
          )
        )

      /** Waits until the daemon's socket answers; a start that never serves fails with its log's tail. */
      const awaitServing = (spec: ServiceSpec) =>
        pollUntil(
          Effect.map(socketAnswers(spec.socketPath), (ok) => (ok ? Option.some(true) : Option.none())),
          POLL,
          SUPERVISOR_START_WAIT
        ).pipe(
          Effect.flatMap(
            Option.match({
              onSome: () => Effect.void,
              onNone: () =>
                Effect.fail(
                  new ServiceError({
                    detail: `blctxd did not answer on ${spec.socketPath} within ${Duration.format(SUPERVISOR_START_WAIT)} of launchd starting it: ${logTail(spec.logFile, 3) || "the log is empty"}`,
                    remediation: `See ${spec.logFile} and: launchctl print ${launchctl.domain}/${launchdLabel(spec)}`
                  })
                )
            })
          )
        )

      const install = Effect.fn("Launchd.install")(function* (spec: ServiceSpec) {
        const label = launchdLabel(spec)
        const unchanged = Option.exists(readText(plistPathOf(spec)), (text) => text === renderPlist(spec))
        const loaded = Option.isSome(yield* launchctl.print(label).pipe(Effect.mapError(fromLaunchctl)))
        yield* writePlist(spec)
        if (loaded && unchanged) {
          // The same agent keeps its running daemon; kickstart starts it only if it is not running.
          yield* launchctl.kickstart(label, false).pipe(Effect.mapError(fromLaunchctl))
        } else {
          // A changed plist takes effect only once unloaded and loaded again.
          if (loaded) yield* launchctl.bootout(label).pipe(Effect.mapError(fromLaunchctl))
          yield* launchctl.bootstrap(plistPathOf(spec)).pipe(Effect.mapError(fromLaunchctl))
        }
        yield* awaitServing(spec)
      })

      const ensureRunning = Effect.fn("Launchd.ensureRunning")(function* (spec: ServiceSpec) {
        if (yield* socketAnswers(spec.socketPath)) return
        const label = launchdLabel(spec)
        const loaded = Option.isSome(yield* launchctl.print(label).pipe(Effect.mapError(fromLaunchctl)))
        if (loaded) yield* launchctl.kickstart(label, false).pipe(Effect.mapError(fromLaunchctl))
        else yield* launchctl.bootstrap(plistPathOf(spec)).pipe(Effect.mapError(fromLaunchctl))
        yield* awaitServing(spec)
      })

      const status = Effect.fn("Launchd.status")(function* (spec: ServiceSpec) {
        const service = yield* launchctl.print(launchdLabel(spec)).pipe(Effect.mapError(fromLaunchctl))
        const mainPid = Option.flatMap(service, (s) => s.pid)
        return {
          unitPath: plistPathOf(spec),
          unitContent: readText(plistPathOf(spec)),
          expectedUnit: renderPlist(spec),
          enabled: Option.isSome(service),
          active: Option.exists(service, (s) => s.state === "running"),
          mainPid,
          commandLine: Option.flatMap(mainPid, commandLineOf)
        }
      })

      const uninstall = Effect.fn("Launchd.uninstall")(function* (spec: ServiceSpec) {
        yield* launchctl.bootout(launchdLabel(spec)).pipe(Effect.mapError(fromLaunchctl))
        // Whatever launchd said, nothing of this installation's daemon may remain.
        yield* Effect.forEach(findDaemonPids(spec), (pid) => stopProcess(pid, "5 seconds"))
        Fs.rmSync(plistPathOf(spec), { force: true })
        removeSocketFile(spec.socketPath)
      })

      return ServiceManager.of({
        kind: "launchd",
        description: "launchd user agent",
        install,
        ensureRunning,
        status,
        uninstall
      })
    })
  )

/** launchd with the real launchctl, agents in the person's ~/Library/LaunchAgents. */
export const LaunchdServiceManagerLive = Layer.suspend(() =>
  makeLaunchdServiceManager(NodePath.join(process.env.HOME ?? "", "Library", "LaunchAgents")).pipe(
    Layer.provide(LaunchctlLive)
  )
)
