import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { type Duration, Effect, Layer, Option } from "effect"
import { ServiceError, ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import { renderUnit } from "../src/service/systemd-unit.js"
import { commandLineOf, findDaemonPids, removeSocketFile, runCommand, stopProcess } from "./daemon-process-table.js"
import { writeAtomicLive } from "./node-safe-fs.js"

const UNAVAILABLE_REMEDIATION =
  "systemctl --user needs a running user manager and session bus: log in through a session (or `loginctl enable-linger` if you choose), check XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS, or use the detached supervisor: BLCTX_SERVICE_MANAGER=detached blctx install codex"

/** `systemctl --user` through one executable (a stand-in in tests), bounded in time. */
const makeSystemctl = (executable: string, executor: CommandExecutor.CommandExecutor) => {
  const systemctl = (args: ReadonlyArray<string>, timeout: Duration.DurationInput = "20 seconds") =>
    runCommand(Command.make(executable, "--user", ...args), timeout).pipe(
      Effect.provideService(CommandExecutor.CommandExecutor, executor)
    )

  const run = (args: ReadonlyArray<string>) =>
    Effect.flatMap(systemctl(args), (r) =>
      r.code === 0
        ? Effect.succeed(r.stdout)
        : Effect.fail(
            new ServiceError({
              detail: `systemctl --user ${args.join(" ")} failed: ${r.stderr.trim().split("\n")[0] || `exit status ${r.code}`}`,
              remediation: `See: journalctl --user -u ${args.at(-1) ?? "blctxd"}; ${UNAVAILABLE_REMEDIATION}`
            })
          )
    )

  /** Fails with a remediation when there is no user manager to talk to. */
  const requireManager = Effect.flatMap(systemctl(["show-environment"], "5 seconds"), (r) =>
    r.code === 0
      ? Effect.void
      : Effect.fail(
          new ServiceError({
            detail: `the systemd user manager is unavailable: ${r.stderr.trim().split("\n")[0] || "no answer"}`,
            remediation: UNAVAILABLE_REMEDIATION
          })
        )
  )
  return { systemctl, run, requireManager }
}

export const unitPathOf = (spec: ServiceSpec) => NodePath.join(spec.configDir, `${spec.name}.service`)
const unitName = (spec: ServiceSpec) => `${spec.name}.service`

const readText = (path: string) => Option.liftThrowable(() => Fs.readFileSync(path, "utf8"))()

const writeUnit = (spec: ServiceSpec) =>
  writeAtomicLive(unitPathOf(spec), renderUnit(spec), 0o600).pipe(
    Effect.mapError(
      (e) =>
        new ServiceError({
          detail: `cannot write ${unitPathOf(spec)}: ${e.message}`,
          remediation: "Check the config directory."
        })
    )
  )

const parseShow = (text: string) =>
  new Map(
    text
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const)
  )

/**
 * A systemd user unit (Linux): `blctxd-<uuid>.service` in the blctx config directory, linked
 * and enabled with `systemctl --user` (no sudo, no lingering). Type=notify, so `start` returns
 * only once the daemon has bound its socket. `systemctl` is the executable run (a stand-in in tests).
 */
export const makeSystemdUserServiceManager = (systemctlExecutable = "systemctl") =>
  Layer.effect(
    ServiceManager,
    Effect.gen(function* () {
      const { systemctl, run, requireManager } = makeSystemctl(
        systemctlExecutable,
        yield* CommandExecutor.CommandExecutor
      )
      return ServiceManager.of({
        kind: "systemd-user",
        description: "systemd user manager",
        install: Effect.fn("SystemdUser.install")(function* (spec: ServiceSpec) {
          yield* requireManager
          const unchanged = Option.exists(readText(unitPathOf(spec)), (text) => text === renderUnit(spec))
          yield* writeUnit(spec)
          yield* run(["link", unitPathOf(spec)])
          yield* run(["daemon-reload"])
          yield* run(["enable", unitName(spec)])
          // The same unit keeps its running daemon (start is a no-op then); a changed one is restarted.
          yield* run([unchanged ? "start" : "restart", unitName(spec)])
        }),
        ensureRunning: Effect.fn("SystemdUser.ensureRunning")(function* (spec: ServiceSpec) {
          yield* requireManager
          yield* run(["start", unitName(spec)])
        }),
        status: Effect.fn("SystemdUser.status")(function* (spec: ServiceSpec) {
          yield* requireManager
          const show = parseShow(
            yield* run(["show", unitName(spec), "-p", "UnitFileState", "-p", "ActiveState", "-p", "MainPID"])
          )
          const pid = Number(show.get("MainPID") ?? "0")
          const mainPid = pid > 0 ? Option.some(pid) : Option.none()
          return {
            unitPath: unitPathOf(spec),
            unitContent: readText(unitPathOf(spec)),
            expectedUnit: renderUnit(spec),
            enabled: show.get("UnitFileState") === "enabled" || show.get("UnitFileState") === "linked",
            active: show.get("ActiveState") === "active",
            mainPid,
            commandLine: Option.flatMap(mainPid, commandLineOf)
          }
        }),
        uninstall: Effect.fn("SystemdUser.uninstall")(function* (spec: ServiceSpec) {
          const manager = yield* Effect.either(requireManager)
          if (manager._tag === "Right") {
            yield* systemctl(["disable", "--now", unitName(spec)])
            yield* systemctl(["daemon-reload"])
          }
          // Whatever the manager said, nothing of this installation's daemon may remain.
          yield* Effect.forEach(findDaemonPids(spec), (pid) => stopProcess(pid, "5 seconds"))
          Fs.rmSync(unitPathOf(spec), { force: true })
          removeSocketFile(spec.socketPath)
        })
      })
    })
  )

/** The real `systemctl`, run through Node's CommandExecutor. */
export const SystemdUserServiceManagerLive = makeSystemdUserServiceManager().pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)
