import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { type Duration, Effect, Layer, Option } from "effect"
import {
  commandLineOf,
  findDaemonPids,
  isAlive,
  logTail,
  pollUntil,
  removeSocketFile,
  stopProcess
} from "../layers/daemon-process-table.js"
import { unitPathOf } from "../layers/systemd-user-service-manager.js"
import { ServiceError, ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import { renderUnit } from "../src/service/systemd-unit.js"

const readText = (path: string) => Option.liftThrowable(() => Fs.readFileSync(path, "utf8"))()

interface FakeState {
  readonly active_state: string
  readonly main_pid: number
  readonly restarts: number
  readonly nonce: string
}

/**
 * Tests only: `systemctl --user` against the fake manager process running on `root`
 * (`acceptance/programs/fake-systemd-manager.ts`), composed only into the test CLI entry
 * (`acceptance/programs/cli-fake-systemd.ts`), never into the product's. Units
 * are written to the config directory exactly as the real layer writes them; the manager
 * really runs their ExecStart and restarts them on failure.
 */
export const FakeSystemdServiceManager = (root: string) => {
  const at = (...parts: ReadonlyArray<string>) => NodePath.join(root, ...parts)
  const error = (detail: string, remediation: string) => new ServiceError({ detail, remediation })

  const requireManager = Effect.suspend(() => {
    const pid = Number.parseInt(readText(at("manager.pid")).pipe(Option.getOrElse(() => "")), 10)
    return Number.isSafeInteger(pid) && isAlive(pid)
      ? Effect.void
      : Effect.fail(error(`the (fake) systemd user manager at ${root} is not running`, "Start the fake manager first."))
  })

  const stateOf = (spec: ServiceSpec): Option.Option<FakeState> =>
    readText(at("state", `${spec.name}.json`)).pipe(
      Option.flatMap(Option.liftThrowable((t) => JSON.parse(t) as FakeState))
    )

  const waitFor = (spec: ServiceSpec, done: (s: FakeState) => boolean, limit: Duration.DurationInput, what: string) =>
    Effect.gen(function* () {
      const reached = yield* pollUntil(
        Effect.sync(() => Option.filter(stateOf(spec), done)),
        "50 millis",
        limit
      )
      if (Option.isSome(reached)) return
      return yield* error(
        `${spec.name}.service did not become ${what}: ${logTail(at("logs", `${spec.name}.log`), 3)}`,
        `See ${at("logs", `${spec.name}.log`)}`
      )
    })

  const start = (spec: ServiceSpec, restart: boolean) =>
    Effect.gen(function* () {
      const current = readText(at("desired", spec.name))
      const nonce =
        !restart && Option.exists(current, (c) => c.startsWith("start:"))
          ? Option.getOrElse(current, () => "")
              .slice("start:".length)
              .trim()
          : randomBytes(6).toString("hex")
      Fs.writeFileSync(at("desired", spec.name), `start:${nonce}\n`)
      yield* waitFor(
        spec,
        (s) => s.active_state === "active" && s.nonce === nonce && s.main_pid > 0,
        "30 seconds",
        "active"
      )
    })

  return Layer.succeed(ServiceManager, {
    kind: "fake-systemd",
    description: "fake systemd user manager (tests)",
    install: Effect.fn("FakeSystemd.install")(function* (spec: ServiceSpec) {
      yield* requireManager
      const path = unitPathOf(spec)
      const unchanged = Option.exists(readText(path), (text) => text === renderUnit(spec))
      Fs.writeFileSync(`${path}.tmp`, renderUnit(spec), { mode: 0o600 })
      Fs.renameSync(`${path}.tmp`, path)
      Fs.rmSync(at("units", `${spec.name}.service`), { force: true })
      Fs.symlinkSync(path, at("units", `${spec.name}.service`))
      Fs.writeFileSync(at("enabled", spec.name), "default.target\n")
      // Like systemctl: the same unit keeps its running daemon; a changed one is restarted.
      yield* start(spec, !unchanged)
    }),
    ensureRunning: Effect.fn("FakeSystemd.ensureRunning")(function* (spec: ServiceSpec) {
      yield* requireManager
      yield* start(spec, false)
    }),
    status: Effect.fn("FakeSystemd.status")(function* (spec: ServiceSpec) {
      yield* requireManager
      const state = stateOf(spec)
      const pid = Option.filter(
        Option.map(state, (s) => s.main_pid),
        (p) => p > 0
      )
      return {
        unitPath: unitPathOf(spec),
        unitContent: readText(unitPathOf(spec)),
        expectedUnit: renderUnit(spec),
        enabled: Fs.existsSync(at("enabled", spec.name)),
        active: Option.exists(state, (s) => s.active_state === "active"),
        mainPid: pid,
        commandLine: Option.flatMap(pid, commandLineOf)
      }
    }),
    uninstall: Effect.fn("FakeSystemd.uninstall")(function* (spec: ServiceSpec) {
      if (Fs.existsSync(at("units", `${spec.name}.service`))) {
        Fs.writeFileSync(at("desired", spec.name), "stop\n")
        yield* waitFor(spec, (s) => s.main_pid === 0, "7 seconds", "inactive").pipe(Effect.ignore)
        Fs.rmSync(at("enabled", spec.name), { force: true })
        Fs.rmSync(at("units", `${spec.name}.service`), { force: true })
      }
      yield* Effect.forEach(findDaemonPids(spec), (pid) => stopProcess(pid, "5 seconds"))
      Fs.rmSync(unitPathOf(spec), { force: true })
      removeSocketFile(spec.socketPath)
    })
  })
}
