#!/usr/bin/env node
/**
 * A fake systemd user manager, for tests only: a long-lived process (like `systemd --user`)
 * that really runs each linked unit's ExecStart as a child, waits for READY=1 (Type=notify,
 * through a `systemd-notify` stand-in on PATH), restarts it on failure (Restart=on-failure) and
 * stops it with SIGTERM then SIGKILL (TimeoutStopSec). The FakeSystemd layer is its systemctl.
 *
 *   node fake-systemd-manager.js DIR
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { parseUnit } from "../src/service/systemd-unit.js"

const root = process.argv[2]
if (root === undefined || !NodePath.isAbsolute(root)) {
  process.stderr.write("usage: fake-systemd-manager ABSOLUTE_DIR\n")
  process.exit(2)
}
const dir = (name: string) => NodePath.join(root, name)
for (const d of ["units", "enabled", "desired", "state", "notify", "logs", "bin"])
  Fs.mkdirSync(dir(d), { recursive: true })

const shim = dir("bin/systemd-notify")
Fs.writeFileSync(
  shim,
  `#!/bin/sh
for a in "$@"; do
  case "$a" in
    --ready) echo READY=1 ;;
    --status=*) echo "STATUS=\${a#--status=}" ;;
    *) echo "$a" ;;
  esac
done >> "$NOTIFY_SOCKET"
`,
  { mode: 0o700 }
)

interface Unit {
  child: ChildProcess | undefined
  startedAt: number
  nonce: string
  state: "inactive" | "activating" | "active" | "deactivating" | "failed"
  restarts: number
  restartAt: number
  stopDeadline: number
}
const units = new Map<string, Unit>()

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
      main_pid: unit.child?.pid ?? 0,
      restarts: unit.restarts,
      nonce: unit.nonce
    })
  )
  Fs.renameSync(`${path}.tmp`, path)
}

const launch = (name: string, unit: Unit, execStart: ReadonlyArray<string>) => {
  const [command, ...args] = execStart
  if (command === undefined) return
  const notify = dir(`notify/${name}`)
  Fs.writeFileSync(notify, "")
  const log = Fs.openSync(dir(`logs/${name}.log`), "a")
  const child = spawn(command, args, {
    stdio: ["ignore", log, log],
    env: { ...process.env, NOTIFY_SOCKET: notify, PATH: `${dir("bin")}:${process.env.PATH ?? ""}` }
  })
  Fs.closeSync(log)
  unit.child = child
  unit.startedAt = Date.now()
  unit.state = "activating"
  child.once("exit", (code, signal) => {
    if (unit.child !== child) return
    unit.child = undefined
    const failed = code !== 0 || signal !== null
    const wanted = read(dir(`desired/${name}`))?.startsWith("start") === true
    const parsed = parseUnit(read(dir(`units/${name}.service`)) ?? "")
    if (unit.state !== "deactivating" && wanted && failed && parsed?.restartOnFailure === true) {
      unit.state = "activating"
      unit.restarts++
      unit.restartAt = Date.now() + 500
    } else {
      unit.state = failed && unit.state !== "deactivating" ? "failed" : "inactive"
    }
    writeState(name, unit)
  })
}

const tick = () => {
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
    const [verb, nonce = ""] = desired.trim().split(":")
    if (verb === "start") {
      if (unit.child !== undefined && nonce !== unit.nonce && unit.state !== "deactivating") {
        // systemctl restart: stop the current process; it is started again below once gone.
        unit.state = "deactivating"
        unit.stopDeadline = Date.now() + parsed.timeoutStopSec * 1000
        unit.child.kill("SIGTERM")
      }
      if (unit.child === undefined && Date.now() >= unit.restartAt) {
        unit.nonce = nonce
        launch(name, unit, parsed.execStart)
      }
      if (unit.state === "activating" && unit.child !== undefined) {
        if (!parsed.notify || (read(dir(`notify/${name}`)) ?? "").includes("READY=1")) unit.state = "active"
        else if (Date.now() - unit.startedAt > parsed.timeoutStartSec * 1000) {
          unit.child.kill("SIGKILL")
        }
      }
    } else if (unit.child !== undefined) {
      if (unit.state !== "deactivating") {
        unit.state = "deactivating"
        unit.stopDeadline = Date.now() + parsed.timeoutStopSec * 1000
        unit.child.kill("SIGTERM")
      }
    }
    if (unit.state === "deactivating" && unit.child !== undefined && Date.now() > unit.stopDeadline) {
      unit.child.kill("SIGKILL")
    }
    writeState(name, unit)
  }
}

Fs.writeFileSync(dir("manager.pid"), `${process.pid}\n`)
const timer = setInterval(tick, 50)

const shutdown = () => {
  clearInterval(timer)
  const children = [...units.values()].flatMap((u) => (u.child === undefined ? [] : [u.child]))
  for (const c of children) c.kill("SIGTERM")
  setTimeout(() => {
    for (const c of children) c.kill("SIGKILL")
    process.exit(0)
  }, 5_000).unref()
  if (children.length === 0) process.exit(0)
  let left = children.length
  for (const c of children) {
    c.once("exit", () => {
      if (--left === 0) process.exit(0)
    })
  }
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
