import { Duration, Effect, Option } from "effect"
import { SafeFs } from "../../fs/safe-fs.js"
import type { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { lockFileIn } from "../../paths/daemon-files.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { DaemonConnector } from "../../rpc/daemon-connector.js"
import { stoppingReason } from "../../rpc/daemon-stopping.js"
import { type ServiceError, ServiceManager } from "../../service/service-manager.js"
import { makeServiceSpec, type ServiceSpec } from "../../service/service-spec.js"
import { fail } from "../step.js"
import { readInstallationManifest } from "./installation-manifest.js"
import { stepWithServices } from "./step-context.js"

/**
 * The identity Ping of verify (so of every status): one client deadline, so a daemon that is
 * stopped or hung fails this step, and blocks the steps that need it, within 5 s.
 */
const IDENTITY_TIMEOUT = Duration.seconds(5)
/** How long install waits for an answer from a daemon that may already be running. */
const PROBE_TIMEOUT = Duration.seconds(5)

/** What was running before install: a daemon that answered, a process that did not, or nothing. */
export type Before =
  | { readonly _tag: "Answering"; readonly pid: number }
  | {
      readonly _tag: "Stale"
      readonly pid: number | null
      readonly socket: boolean
      /** Why it refused to answer: it is stopping, since a file it holds was removed or replaced. */
      readonly stopping?: string
    }
  | { readonly _tag: "Nothing" }

/**
 * What install did, in words that match what happened: the same daemon kept running, a new one
 * started, or a new one replaced another (a stale one, or a healthy one the supervisor restarts).
 */
export const describeInstall = (before: Before, after: number | null, supervisor: string): string => {
  const pid = after === null ? "" : ` (pid ${after})`
  const under = `under the ${supervisor}`
  switch (before._tag) {
    case "Answering":
      return after === null || after === before.pid
        ? `blctxd already running (pid ${before.pid}) ${under}`
        : `restarted blctxd${pid} ${under}; it replaced pid ${before.pid}`
    case "Stale":
      if (before.stopping !== undefined) {
        const replaced = before.pid === null ? "" : ` it replaced pid ${before.pid}:`
        return `${before.pid === null ? "started" : "restarted"} blctxd${pid} ${under};${replaced} ${before.stopping}`
      }
      if (before.pid !== null && after === before.pid) {
        return `blctxd already running (pid ${before.pid}) ${under}; it did not answer before install, it does now`
      }
      if (before.pid !== null) {
        return `restarted blctxd${pid} ${under}; it replaced a stale blctxd (pid ${before.pid}) that did not answer`
      }
      return before.socket
        ? `started blctxd${pid} ${under}; it replaced a stale socket left by a daemon that is gone`
        : `started blctxd${pid} ${under}`
    case "Nothing":
      return `started blctxd${pid} ${under}`
  }
}

const fromService = (e: ServiceError) => fail(e.detail, e.remediation, e._tag)

/** How much of the daemon's log doctor reads, from its end. */
const LOG_TAIL_LINES = 500

/**
 * The last error the daemon logged: its log is JSON lines (`logLevel`, `timestamp`, `message`,
 * `annotations`); lines that are not JSON (a crash's stack trace) count when they say "Error".
 */
export const lastLoggedError = (log: string): Option.Option<string> => {
  const lines = log.split("\n").filter((l) => l.trim() !== "")
  for (const line of lines.slice(-LOG_TAIL_LINES).reverse()) {
    let entry: unknown
    try {
      entry = JSON.parse(line)
    } catch {
      if (/Error\b/.test(line)) return Option.some(line.trim().slice(0, 300))
      continue
    }
    if (typeof entry !== "object" || entry === null) continue
    const e = entry as { logLevel?: unknown; timestamp?: unknown; message?: unknown; annotations?: unknown }
    if (e.logLevel !== "ERROR" && e.logLevel !== "FATAL") continue
    const message = Array.isArray(e.message) ? e.message.map(String).join(" ") : String(e.message ?? "")
    const annotations =
      typeof e.annotations === "object" && e.annotations !== null && Object.keys(e.annotations).length > 0
        ? ` ${JSON.stringify(e.annotations)}`
        : ""
    const when = typeof e.timestamp === "string" ? `${e.timestamp} ` : ""
    return Option.some(`${when}${message}${annotations}`.slice(0, 300))
  }
  return Option.none()
}

const REINSTALL = "Run: blctx install codex --step background_service"

const specOf = (m: Manifest) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const programs = yield* ProgramPaths
    return makeServiceSpec({ installationId: m.installation_id, paths, node: programs.node, daemon: programs.daemon })
  })

const activeManifest = Effect.gen(function* () {
  const manifest = yield* readInstallationManifest
  const { path } = yield* ManifestStore
  if (Option.isNone(manifest)) {
    return yield* fail(`no manifest at ${path}: blctx is not installed`, "Run: blctx install codex")
  }
  if (manifest.value.state !== "active") {
    return yield* fail(
      `installation ${manifest.value.installation_id} is inactive (uninstalled)`,
      "Run: blctx install codex"
    )
  }
  return manifest.value
})

/** Pings this installation's daemon: its PID if it answers, or why it refused (it is stopping). */
const probe = (m: Manifest, socketPath: string) =>
  Effect.flatMap(DaemonConnector, (connector) =>
    connector
      .withClient({ socketPath, timeout: PROBE_TIMEOUT }, (client) => client.Ping())
      .pipe(
        Effect.map((identity) => ({
          pid: identity.installation_id === m.installation_id ? Option.some(identity.pid) : Option.none<number>(),
          stopping: null
        })),
        Effect.catchAll((e) => Effect.succeed({ pid: Option.none<number>(), stopping: stoppingReason(e) }))
      )
  )

/** The main PID the service manager knows of, if any (a manager that cannot say knows none). */
const managedPid = (spec: ServiceSpec) =>
  Effect.flatMap(ServiceManager, (manager) =>
    manager.status(spec).pipe(
      Effect.map((s) => s.mainPid),
      Effect.orElseSucceed(() => Option.none<number>())
    )
  )

/** What was running before install. */
const before = (m: Manifest) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const spec = yield* specOf(m)
    const answering = yield* probe(m, spec.socketPath)
    if (Option.isSome(answering.pid)) return { _tag: "Answering", pid: answering.pid.value } satisfies Before
    const known = yield* managedPid(spec)
    const socket = yield* fs.lstat(spec.socketPath).pipe(
      Effect.map(Option.isSome),
      Effect.orElseSucceed(() => false)
    )
    // A daemon that refused because its database was replaced is replaced in turn: say so.
    if (answering.stopping !== null) {
      return { _tag: "Stale", pid: Option.getOrNull(known), socket, stopping: answering.stopping } satisfies Before
    }
    if (Option.isNone(known) && !socket) return { _tag: "Nothing" } satisfies Before
    return { _tag: "Stale", pid: Option.getOrNull(known), socket } satisfies Before
  })

const install = Effect.fn("BackgroundService.install")(function* () {
  const manager = yield* ServiceManager
  const m = yield* activeManifest
  const spec = yield* specOf(m)
  const was: Before = yield* before(m)
  yield* manager.install(spec).pipe(Effect.mapError(fromService))
  const answering = yield* Effect.map(probe(m, spec.socketPath), (p) => p.pid)
  const after = Option.isSome(answering) ? answering : yield* managedPid(spec)
  return { detail: describeInstall(was, Option.getOrNull(after), manager.description) }
})

/** The unit is the one this blctx writes, enabled and running the unit's command; the running PID. */
const checkUnit = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    const manager = yield* ServiceManager
    const status = yield* manager.status(spec).pipe(Effect.mapError(fromService))
    if (Option.isNone(status.unitContent)) {
      return yield* fail(`${status.unitPath} does not exist (${manager.description})`, REINSTALL)
    }
    if (status.unitContent.value !== status.expectedUnit) {
      return yield* fail(`${status.unitPath} differs from what this version of blctx writes`, REINSTALL)
    }
    if (!status.enabled) return yield* fail(`${spec.name} is not enabled (${manager.description})`, REINSTALL)
    if (!status.active || Option.isNone(status.mainPid)) {
      return yield* fail(`blctxd is not running (${manager.description})`, REINSTALL)
    }
    const pid = status.mainPid.value
    const argv = Option.getOrElse(status.commandLine, () => [] as ReadonlyArray<string>)
    if (argv.join("\0") !== spec.command.join("\0")) {
      return yield* fail(
        `the running blctxd (PID ${pid}) was started as \`${argv.join(" ")}\`, not as the unit says`,
        REINSTALL
      )
    }
    return pid
  })

/** The socket is there, a socket, and private. */
const checkSocket = (socketPath: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const socket = yield* fs.lstat(socketPath).pipe(Effect.mapError((e) => fail(e.message, REINSTALL)))
    if (Option.isNone(socket) || socket.value.kind !== "socket") {
      return yield* fail(`${socketPath} is missing or not a socket`, REINSTALL)
    }
    if (socket.value.mode !== 0o600) {
      return yield* fail(
        `${socketPath} has mode ${socket.value.mode.toString(8).padStart(4, "0")}; blctx requires 0600`,
        REINSTALL
      )
    }
  })

/** The daemon on the socket serves this installation's database, and is the service's process. */
const checkIdentity = (m: Manifest, socketPath: string, pid: number) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const connector = yield* DaemonConnector
    const identity = yield* connector
      .withClient({ socketPath, timeout: IDENTITY_TIMEOUT }, (client) => client.Ping())
      .pipe(Effect.mapError((e) => fail(e.message, e.remediation)))
    if (identity.installation_id !== m.installation_id || identity.db_path !== paths.database) {
      return yield* fail(
        `the daemon on ${socketPath} serves installation ${identity.installation_id} (${identity.db_path}), not ${m.installation_id} (${paths.database})`,
        REINSTALL
      )
    }
    if (identity.pid !== pid) {
      return yield* fail(`the socket is served by PID ${identity.pid}, but the service's process is ${pid}`, REINSTALL)
    }
  })

const verify = Effect.fn("BackgroundService.verify")(function* () {
  const manager = yield* ServiceManager
  const m = yield* activeManifest
  const spec = yield* specOf(m)
  const pid = yield* checkUnit(spec)
  yield* checkSocket(spec.socketPath)
  yield* checkIdentity(m, spec.socketPath, pid)
  return { detail: `blctxd PID ${pid} under the ${manager.description}; socket ${spec.socketPath} (0600)` }
})

/** Where the daemon's log is, and the last error in it when blctx writes it itself. */
const logNote = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    const manager = yield* ServiceManager
    const fs = yield* SafeFs
    if (manager.kind === "systemd-user") return `its log is in the journal: journalctl --user -u ${spec.name}`
    return yield* fs.readText(spec.logFile).pipe(
      Effect.map((text) =>
        Option.match(lastLoggedError(text), {
          onNone: () => `no error in the last ${LOG_TAIL_LINES} lines of ${spec.logFile}`,
          onSome: (line) => `last error in ${spec.logFile}: ${line}`
        })
      ),
      Effect.orElseSucceed(() => `no log at ${spec.logFile}`)
    )
  })

/**
 * Doctor: what the supervisor itself says (unit, enabled, active, main PID and whether that
 * process exists) and the last error in the daemon's log, so a daemon that will not stay up
 * says why. Fails only when the supervisor's view contradicts itself.
 */
const diagnose = Effect.fn("BackgroundService.diagnose")(function* () {
  const manager = yield* ServiceManager
  const manifest = yield* readInstallationManifest
  if (Option.isNone(manifest)) return { detail: "nothing deeper to check: no manifest, so no service" }
  const spec = yield* specOf(manifest.value)
  const status = yield* manager.status(spec).pipe(Effect.mapError(fromService))
  const pid = Option.getOrNull(status.mainPid)
  const alive = Option.isSome(status.commandLine)
  const view = [
    `${manager.description}: ${Option.isSome(status.unitContent) ? status.unitPath : `no ${status.unitPath}`}`,
    status.enabled ? "enabled" : "not enabled",
    status.active ? "active" : "inactive",
    pid === null ? "no main PID" : `main PID ${pid} ${alive ? "alive" : "not found in the process table"}`
  ].join(", ")
  const log = yield* logNote(spec)
  if (pid !== null && !alive) {
    return yield* fail(
      `the ${manager.description} names main PID ${pid}, but no such blctxd process exists; ${log}`,
      "Run: blctx install codex --step background_service (it restarts the daemon)"
    )
  }
  return { detail: `supervisor: ${view}; ${log}` }
})

/** With the daemon stopped, its lock, pidfile and log can go with the rest of the data. */
const removeDaemonFiles = (spec: ServiceSpec) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const { dataDir } = yield* Paths
    for (const file of [spec.logFile, spec.pidFile, lockFileIn(dataDir), `${lockFileIn(dataDir)}-journal`]) {
      yield* fs
        .removeFile(file)
        .pipe(Effect.mapError((e) => fail(`cannot remove ${file}: ${e.code}`, `Remove ${file} by hand.`)))
    }
  })

const uninstall = Effect.fn("BackgroundService.uninstall")(function* (purge: boolean) {
  const manager = yield* ServiceManager
  const manifest = yield* readInstallationManifest
  if (Option.isNone(manifest)) return { detail: "nothing to stop: no manifest" }
  const spec = yield* specOf(manifest.value)
  yield* manager.uninstall(spec).pipe(Effect.mapError(fromService))
  const after = yield* manager.status(spec).pipe(Effect.mapError(fromService))
  if (Option.isSome(after.mainPid)) {
    return yield* fail(`blctxd PID ${after.mainPid.value} is still running`, `Stop it: kill ${after.mainPid.value}`)
  }
  if (purge) yield* removeDaemonFiles(spec)
  return { detail: `stopped blctxd and removed its unit and socket; supervisor: ${manager.description}` }
})

/**
 * blctxd under a service manager. Verify checks active ownership, the unit's exact content,
 * that it is enabled, that the running process is the unit's command, the socket's mode, and
 * the daemon's identity over the protocol. Uninstall stops it and removes unit and socket
 * before the data step gives up ownership.
 */
export const backgroundServiceStep = stepWithServices(
  { id: "background_service", title: "Background service (blctxd)", requires: ["data_directory"] },
  {
    install: () => install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: (run) => uninstall(run.purge)
  }
)
