import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Effect, Layer, Option } from "effect"
import { ServiceError, ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import {
  commandLineOf,
  findDaemonPids,
  isAlive,
  logTail,
  recordedDaemonPid,
  removeSocketFile,
  socketAnswers,
  stopProcess
} from "./daemon-process-table.js"

const START_LIMIT_MS = 10_000
const STOP_GRACE_MS = 5_000
const LOG_LIMIT_BYTES = 5 * 1024 * 1024

/** The detached supervisor's "unit": the command it launches, kept beside the socket. */
export const launchRecordPath = (spec: ServiceSpec) => NodePath.join(spec.stateDir, "blctxd.launch.json")
const launchRecord = (spec: ServiceSpec) =>
  `${JSON.stringify({ supervisor: "detached", name: spec.name, command: spec.command }, null, 2)}\n`

const readText = (path: string): Option.Option<string> => {
  try {
    return Option.some(Fs.readFileSync(path, "utf8"))
  } catch {
    return Option.none()
  }
}

const serviceError = (detail: string, remediation: string) => new ServiceError({ detail, remediation })

const writeRecord = (spec: ServiceSpec) =>
  Effect.try({
    try: () => {
      const path = launchRecordPath(spec)
      const temp = `${path}.${process.pid}.tmp`
      Fs.writeFileSync(temp, launchRecord(spec), { mode: 0o600 })
      Fs.renameSync(temp, path)
    },
    catch: (e) => serviceError(`cannot write ${launchRecordPath(spec)}: ${String(e)}`, "Check the state directory.")
  })

const mainPid = (spec: ServiceSpec) =>
  Option.orElse(recordedDaemonPid(spec), () => Option.fromNullable(findDaemonPids(spec)[0]))

/** Launches the daemon in its own session, logging to the state directory, and waits until it serves. */
const start = (spec: ServiceSpec, command: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const [node, ...args] = command
    if (node === undefined) return yield* serviceError("empty launch command", "Run: blctx install codex")
    const log = yield* Effect.try({
      try: () => {
        const size = Option.match(Option.liftThrowable(() => Fs.statSync(spec.logFile).size)(), {
          onNone: () => 0,
          onSome: (s) => s
        })
        return Fs.openSync(spec.logFile, size > LOG_LIMIT_BYTES ? "w" : "a", 0o600)
      },
      catch: (e) => serviceError(`cannot open ${spec.logFile}: ${String(e)}`, "Check the state directory.")
    })
    const env = { ...process.env }
    delete env.NOTIFY_SOCKET
    const child = yield* Effect.try({
      try: () => spawn(node, args, { detached: true, stdio: ["ignore", log, log], env, cwd: "/" }),
      catch: (e) => serviceError(`cannot start ${node}: ${String(e)}`, "Check that node is installed.")
    }).pipe(Effect.ensuring(Effect.sync(() => Fs.closeSync(log))))
    let exited: number | null | undefined
    child.once("exit", (code, signal) => {
      exited = code ?? (signal === null ? -1 : 128)
    })
    child.unref()
    const deadline = Date.now() + START_LIMIT_MS
    while (Date.now() < deadline) {
      if (exited !== undefined) {
        // Another start won the writer lock meanwhile (this one was refused): that one serves.
        if (yield* socketAnswers(spec.socketPath)) return 0
        return yield* serviceError(
          `blctxd exited during startup (status ${exited}): ${logTail(spec.logFile, 3)}`,
          `See ${spec.logFile}; then run: blctx doctor`
        )
      }
      if (yield* socketAnswers(spec.socketPath)) return child.pid ?? 0
      yield* Effect.sleep("50 millis")
    }
    if (child.pid !== undefined) yield* stopProcess(child.pid, 1_000)
    return yield* serviceError(
      `blctxd did not answer on ${spec.socketPath} within ${START_LIMIT_MS / 1000} s`,
      `See ${spec.logFile}; then run: blctx doctor`
    )
  })

const stopAll = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    const pids = new Set([...Option.toArray(recordedDaemonPid(spec)), ...findDaemonPids(spec)])
    yield* Effect.forEach(pids, (pid) => stopProcess(pid, STOP_GRACE_MS), { concurrency: "unbounded" })
    return pids.size
  })

/**
 * Where no user service manager exists (containers, WSL without systemd): blctxd runs as a
 * detached process in its own session; it writes its pidfile and log in the state directory.
 * Nothing restarts it on a crash by itself: the CLI and the hooks restart it on demand.
 */
export const DetachedSupervisorLive = Layer.succeed(ServiceManager, {
  kind: "detached",
  description: "detached supervisor (no systemd user manager)",
  install: Effect.fn("DetachedSupervisor.install")(function* (spec: ServiceSpec) {
    const previous = readText(launchRecordPath(spec))
    yield* writeRecord(spec)
    const running = mainPid(spec)
    const changed = Option.isSome(previous) && previous.value !== launchRecord(spec)
    if (Option.isSome(running) && !changed && (yield* socketAnswers(spec.socketPath))) return
    yield* stopAll(spec)
    yield* start(spec, spec.command)
  }),
  ensureRunning: Effect.fn("DetachedSupervisor.ensureRunning")(function* (spec: ServiceSpec) {
    if (yield* socketAnswers(spec.socketPath)) return
    const record = readText(launchRecordPath(spec))
    if (Option.isNone(record)) {
      return yield* serviceError("blctxd is not installed as a service", "Run: blctx install codex")
    }
    const running = mainPid(spec)
    // A live daemon that does not answer is hung: replace it.
    if (Option.isSome(running) && isAlive(running.value)) yield* stopProcess(running.value, STOP_GRACE_MS)
    const command = Option.liftThrowable(() => JSON.parse(record.value) as { command: ReadonlyArray<string> })()
    yield* start(spec, Option.match(command, { onNone: () => spec.command, onSome: (c) => c.command }))
  }),
  status: Effect.fn("DetachedSupervisor.status")(function* (spec: ServiceSpec) {
    const pid = mainPid(spec)
    return {
      unitPath: launchRecordPath(spec),
      unitContent: readText(launchRecordPath(spec)),
      expectedUnit: launchRecord(spec),
      enabled: Option.isSome(readText(launchRecordPath(spec))),
      active: Option.isSome(pid) && (yield* socketAnswers(spec.socketPath)),
      mainPid: pid,
      commandLine: Option.flatMap(pid, commandLineOf)
    }
  }),
  uninstall: Effect.fn("DetachedSupervisor.uninstall")(function* (spec: ServiceSpec) {
    yield* stopAll(spec)
    Fs.rmSync(launchRecordPath(spec), { force: true })
    removeSocketFile(spec.socketPath)
  })
})
