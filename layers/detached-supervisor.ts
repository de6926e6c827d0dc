import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Duration, Effect, Layer, Option } from "effect"
import { ServiceError, ServiceManager } from "../src/service/service-manager.js"
import type { ServiceSpec } from "../src/service/service-spec.js"
import { SUPERVISOR_START_WAIT } from "../src/service/start-bounds.js"
import {
  commandLineOf,
  findDaemonPids,
  isAlive,
  logTail,
  pollUntil,
  processAgeMs,
  recordedDaemonPid,
  removeSocketFile,
  socketAnswers,
  stopProcess
} from "./daemon-process-table.js"
import { writeAtomicLive } from "./node-safe-fs.js"
import { tryExclusiveLock } from "./sqlite-file-lock.js"

const STOP_GRACE = Duration.seconds(5)
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
  writeAtomicLive(launchRecordPath(spec), launchRecord(spec), 0o600).pipe(
    Effect.mapError((e) =>
      serviceError(`cannot write ${launchRecordPath(spec)}: ${e.message}`, "Check the state directory.")
    )
  )

const mainPid = (spec: ServiceSpec) =>
  Option.orElse(recordedDaemonPid(spec), () => Option.fromNullable(findDaemonPids(spec)[0]))

/** A daemon process this old that still does not accept connections is hung, not starting. */
const HUNG_AFTER_MS = Duration.toMillis(SUPERVISOR_START_WAIT)
const POLL = Duration.millis(100)

/** Held by the one command that starts the daemon; the others wait for the daemon it starts. */
export const startLockPath = (spec: ServiceSpec) => NodePath.join(spec.stateDir, "blctxd.start.lock")

/**
 * Launches the daemon in its own session, logging to the state directory, and waits until it serves.
 *
 * This is the one launch that stays on node:child_process rather than @effect/platform's Command
 * (see ARCHITECTURE.md, "Service managers"): the daemon must outlive this command, with its log
 * file as stdout and stderr. Command ties a child to a Scope (closing it kills the process group),
 * takes only "pipe", "inherit" or a Sink as stdio (a Sink is pumped by this process, which exits)
 * and cannot unref the child, so the CLI would not exit while the daemon runs.
 */
const spawnDaemon = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    // Always the installation's own command, never one read back from a file on disk.
    const [node, ...args] = spec.command
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
    const env = { ...process.env, ...spec.environment }
    delete env.NOTIFY_SOCKET
    const child = yield* Effect.try({
      try: () => spawn(node, args, { detached: true, stdio: ["ignore", log, log], env, cwd: "/" }),
      catch: (e) => serviceError(`cannot start ${node}: ${String(e)}`, "Check that node is installed.")
    }).pipe(Effect.ensuring(Effect.sync(() => Fs.closeSync(log))))
    let exited: number | undefined
    child.once("exit", (code, signal) => {
      exited = code ?? (signal === null ? -1 : 128)
    })
    child.unref()
    const failedToStart = (why: string) =>
      serviceError(
        `${why}: ${logTail(spec.logFile, 3) || "the log is empty"}`,
        `See ${spec.logFile}; then run: blctx doctor`
      )
    const outcome = yield* pollUntil(
      Effect.gen(function* () {
        const answers = yield* socketAnswers(spec.socketPath)
        if (exited !== undefined) {
          // Another daemon won the writer lock meanwhile (this one was refused): that one serves.
          if (answers) return Option.some(0)
          return yield* failedToStart(`blctxd exited during startup (status ${exited})`)
        }
        return answers ? Option.some(child.pid ?? 0) : Option.none()
      }),
      POLL,
      SUPERVISOR_START_WAIT
    )
    if (Option.isSome(outcome)) return outcome.value
    if (child.pid !== undefined) yield* stopProcess(child.pid, "1 second")
    return yield* failedToStart(
      `blctxd did not answer on ${spec.socketPath} within ${Duration.toSeconds(SUPERVISOR_START_WAIT)} s of starting`
    )
  })

/**
 * Runs `body` as the only starter: the start lock is polled (never waited on inside SQLite) and
 * a daemon that starts answering meanwhile, started by whoever holds the lock, ends the wait.
 */
const asOnlyStarter = <A>(
  spec: ServiceSpec,
  body: Effect.Effect<A, ServiceError>,
  whenAnswered: A
): Effect.Effect<A, ServiceError> =>
  Effect.gen(function* () {
    const lockFile = startLockPath(spec)
    const limit = Duration.times(SUPERVISOR_START_WAIT, 2)
    const turn = yield* pollUntil(
      Effect.gen(function* () {
        const held = yield* tryExclusiveLock(lockFile).pipe(
          Effect.mapError((e) =>
            serviceError(`cannot take the start lock ${lockFile}: ${e.message}`, "Check the state directory.")
          )
        )
        if (Option.isSome(held)) return Option.some(Option.some(held.value))
        return (yield* socketAnswers(spec.socketPath)) ? Option.some(Option.none()) : Option.none()
      }),
      POLL,
      limit
    )
    if (Option.isNone(turn)) {
      return yield* serviceError(
        `another blctx command has been starting blctxd for over ${Duration.toSeconds(limit)} s without it answering`,
        `See ${spec.logFile}; then run: blctx doctor`
      )
    }
    return yield* Option.match(turn.value, {
      // Whoever held the lock started a daemon that answers now.
      onNone: () => Effect.succeed(whenAnswered),
      onSome: (held) => Effect.ensuring(body, held.release)
    })
  })

/** Daemon processes of this installation that are alive now. */
const liveDaemons = (spec: ServiceSpec) =>
  [...new Set([...Option.toArray(recordedDaemonPid(spec)), ...findDaemonPids(spec)])].filter(isAlive)

/**
 * Waits while a live daemon is still young enough to be starting (a kill -9 replay, a slow
 * machine): it answers, exits, or grows old enough to count as hung. True once it answers.
 */
const awaitStarting = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    if (yield* socketAnswers(spec.socketPath)) return Option.some(true)
    const starting = liveDaemons(spec).filter((pid) => Option.exists(processAgeMs(pid), (age) => age < HUNG_AFTER_MS))
    return starting.length === 0 ? Option.some(false) : Option.none()
  }).pipe(
    // No bound of its own: a starting daemon answers, exits, or grows old enough to count as hung.
    (check) => pollUntil(check, POLL, Duration.infinity),
    Effect.map(Option.getOrElse(() => false))
  )

/** Under the start lock: a daemon that is starting is waited for; only a hung one is replaced. */
const startUnlessServing = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    if (yield* awaitStarting(spec)) return
    // Whatever is still alive is old and silent: hung. Replace it.
    yield* Effect.forEach(liveDaemons(spec), (pid) => stopProcess(pid, STOP_GRACE), { concurrency: "unbounded" })
    yield* spawnDaemon(spec)
  })

const stopAll = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    const pids = new Set([...Option.toArray(recordedDaemonPid(spec)), ...findDaemonPids(spec)])
    yield* Effect.forEach(pids, (pid) => stopProcess(pid, STOP_GRACE), { concurrency: "unbounded" })
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
    const changed = Option.isSome(previous) && previous.value !== launchRecord(spec)
    yield* asOnlyStarter(
      spec,
      Effect.gen(function* () {
        if (!changed) return yield* startUnlessServing(spec)
        // A different command (another build, another node): the running daemon is replaced.
        yield* stopAll(spec)
        yield* spawnDaemon(spec)
      }),
      undefined
    )
  }),
  ensureRunning: Effect.fn("DetachedSupervisor.ensureRunning")(function* (spec: ServiceSpec) {
    if (yield* socketAnswers(spec.socketPath)) return
    if (Option.isNone(readText(launchRecordPath(spec)))) {
      return yield* serviceError("blctxd is not installed as a service", "Run: blctx install codex")
    }
    yield* asOnlyStarter(spec, startUnlessServing(spec), undefined)
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
    Fs.rmSync(startLockPath(spec), { force: true })
    removeSocketFile(spec.socketPath)
  })
})
