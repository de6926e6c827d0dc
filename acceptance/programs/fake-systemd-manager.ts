#!/usr/bin/env node
/**
 * A fake systemd user manager, for tests only: a long-lived process (like `systemd --user`)
 * that really runs each linked unit's ExecStart as a child, waits for READY=1 (Type=notify,
 * through a `systemd-notify` stand-in on PATH), restarts it on failure (Restart=on-failure) and
 * stops it with SIGTERM then SIGKILL (TimeoutStopSec), signalling the unit's process group as
 * systemd signals its cgroup. What a unit writes on stdout and stderr is appended to
 * `logs/<unit>.log` (journald's part). `testing/fake-systemd-service-manager.ts` is its systemctl.
 *
 *   node dist/test-programs/fake-systemd-manager.mjs ABSOLUTE_DIR
 *
 * `manager.pid` is written last, once the directory is ready: its presence means "running".
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Command, type CommandExecutor } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Clock, Effect, Either, Exit, Fiber, Schedule, Scope, Stream } from "effect"
import { parseUnit } from "../../src/service/systemd-unit.js"

const root = process.argv[2]
if (root === undefined || !NodePath.isAbsolute(root)) {
  process.stderr.write("usage: fake-systemd-manager ABSOLUTE_DIR\n")
  process.exit(2)
}
const dir = (name: string) => NodePath.join(root, name)

const NOTIFY_SHIM = `#!/bin/sh
for a in "$@"; do
  case "$a" in
    --ready) echo READY=1 ;;
    --status=*) echo "STATUS=\${a#--status=}" ;;
    *) echo "$a" ;;
  esac
done >> "$NOTIFY_SOCKET"
`

/** A unit's running main process: the child and the scope that owns it. */
interface Running {
  readonly process: CommandExecutor.Process
  readonly scope: Scope.CloseableScope
}

interface Unit {
  child: Running | undefined
  startedAt: number
  nonce: string
  state: "inactive" | "activating" | "active" | "deactivating" | "failed"
  restarts: number
  restartAt: number
  stopDeadline: number
}

const read = (path: string) => {
  try {
    return Fs.readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

const writeState = (name: string, unit: Unit) => {
  const path = dir(`state/${name}.json`)
  Fs.writeFileSync(
    `${path}.tmp`,
    JSON.stringify({
      active_state: unit.state,
      main_pid: unit.child?.process.pid ?? 0,
      restarts: unit.restarts,
      nonce: unit.nonce
    })
  )
  Fs.renameSync(`${path}.tmp`, path)
}

/** Signals the unit's process group without waiting for it to go (the tick loop watches). */
const signal = (child: Running, sig: CommandExecutor.Signal) =>
  Effect.forkDaemon(Effect.ignore(child.process.kill(sig)))

const units = new Map<string, Unit>()

/** Records that a unit's main process ended (or never started), restarting it later when its unit says so. */
const ended = (name: string, unit: Unit, failed: boolean) =>
  Effect.gen(function* () {
    const wanted = read(dir(`desired/${name}`))?.startsWith("start") === true
    const parsed = parseUnit(read(dir(`units/${name}.service`)) ?? "")
    if (unit.state !== "deactivating" && wanted && failed && parsed?.restartOnFailure === true) {
      unit.state = "activating"
      unit.restarts++
      unit.restartAt = (yield* Clock.currentTimeMillis) + 500
    } else {
      unit.state = failed && unit.state !== "deactivating" ? "failed" : "inactive"
    }
    writeState(name, unit)
  })

const launch = (
  name: string,
  unit: Unit,
  execStart: ReadonlyArray<string>,
  environment: Readonly<Record<string, string>>
) =>
  Effect.gen(function* () {
    const [command, ...args] = execStart
    if (command === undefined) return
    const notify = dir(`notify/${name}`)
    Fs.writeFileSync(notify, "")
    const scope = yield* Scope.make()
    const started = yield* Command.make(command, ...args).pipe(
      Command.stdin("inherit"),
      Command.env({ ...environment, NOTIFY_SOCKET: notify, PATH: `${dir("bin")}:${process.env.PATH ?? ""}` }),
      Command.start,
      Scope.extend(scope),
      Effect.either
    )
    unit.startedAt = yield* Clock.currentTimeMillis
    if (Either.isLeft(started)) {
      // Like systemd when ExecStart cannot be executed: the unit fails (and may be restarted).
      yield* Scope.close(scope, Exit.void)
      return yield* ended(name, unit, true)
    }
    const child: Running = { process: started.right, scope }
    unit.child = child
    unit.state = "activating"
    const log = dir(`logs/${name}.log`)
    const pump = yield* Stream.merge(child.process.stdout, child.process.stderr).pipe(
      Stream.runForEach((chunk) => Effect.sync(() => Fs.appendFileSync(log, chunk))),
      Effect.ignore,
      Effect.forkDaemon
    )
    yield* child.process.exitCode.pipe(
      Effect.either,
      Effect.flatMap((status) => {
        // A restart may already have replaced this process with another.
        if (unit.child !== child) return Effect.void
        unit.child = undefined
        // A status of its own, or none when a signal ended it.
        return ended(name, unit, Either.match(status, { onLeft: () => true, onRight: (code) => code !== 0 }))
      }),
      // The last lines it wrote reach the log before its scope is closed.
      Effect.zipRight(Effect.ignore(Effect.timeout(Fiber.join(pump), "1 second"))),
      Effect.zipRight(Scope.close(scope, Exit.void)),
      Effect.forkDaemon
    )
  })

const tick = Effect.gen(function* () {
  for (const file of Fs.readdirSync(dir("units"))) {
    if (!file.endsWith(".service")) continue
    const name = file.slice(0, -".service".length)
    const parsed = parseUnit(read(dir(`units/${file}`)) ?? "")
    const desired = read(dir(`desired/${name}`)) ?? "stop"
    let unit = units.get(name)
    if (unit === undefined) {
      unit = {
        child: undefined,
        startedAt: 0,
        nonce: "",
        state: "inactive",
        restarts: 0,
        restartAt: 0,
        stopDeadline: 0
      }
      units.set(name, unit)
    }
    if (parsed === undefined) continue
    const now = yield* Clock.currentTimeMillis
    const [verb, nonce = ""] = desired.trim().split(":")
    if (verb === "start") {
      if (unit.child !== undefined && nonce !== unit.nonce && unit.state !== "deactivating") {
        // systemctl restart: stop the current process; it is started again below once gone.
        unit.state = "deactivating"
        unit.stopDeadline = now + parsed.timeoutStopSec * 1000
        yield* signal(unit.child, "SIGTERM")
      }
      if (unit.child === undefined && now >= unit.restartAt) {
        unit.nonce = nonce
        yield* launch(name, unit, parsed.execStart, parsed.environment)
      }
      if (unit.state === "activating" && unit.child !== undefined) {
        if (!parsed.notify || (read(dir(`notify/${name}`)) ?? "").includes("READY=1")) unit.state = "active"
        else if (now - unit.startedAt > parsed.timeoutStartSec * 1000) yield* signal(unit.child, "SIGKILL")
      }
    } else if (unit.child !== undefined && unit.state !== "deactivating") {
      unit.state = "deactivating"
      unit.stopDeadline = now + parsed.timeoutStopSec * 1000
      yield* signal(unit.child, "SIGTERM")
    }
    if (unit.state === "deactivating" && unit.child !== undefined && now > unit.stopDeadline) {
      yield* signal(unit.child, "SIGKILL")
    }
    writeState(name, unit)
  }
})

/** On SIGTERM/SIGINT: every unit gets SIGTERM, and SIGKILL if it is still there 5 s later. */
const stopAll = Effect.suspend(() =>
  Effect.forEach(
    [...units.values()].flatMap((u) => (u.child === undefined ? [] : [u.child])),
    (child) =>
      child.process.kill("SIGTERM").pipe(
        Effect.timeout("5 seconds"),
        Effect.catchAll(() => child.process.kill("SIGKILL")),
        Effect.ignore
      ),
    { concurrency: "unbounded", discard: true }
  )
)

const main = Effect.gen(function* () {
  for (const d of ["units", "enabled", "desired", "state", "notify", "logs", "bin"])
    Fs.mkdirSync(dir(d), { recursive: true })
  Fs.writeFileSync(dir("bin/systemd-notify"), NOTIFY_SHIM, { mode: 0o700 })
  yield* Effect.addFinalizer(() => stopAll)
  Fs.writeFileSync(dir("manager.pid"), `${process.pid}\n`)
  return yield* Effect.repeat(tick, Schedule.spaced("50 millis"))
})

// runMain interrupts `main` on SIGTERM/SIGINT; its finalizer stops the units, and the exit is 0.
NodeRuntime.runMain(main.pipe(Effect.scoped, Effect.provide(NodeContext.layer)), { disablePrettyLogger: true })
