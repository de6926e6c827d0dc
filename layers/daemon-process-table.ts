import * as Fs from "node:fs"
import * as Net from "node:net"
import { Effect, Option } from "effect"
import type { ServiceSpec } from "../src/service/service-spec.js"

/** Linux process table helpers shared by the supervisor layers (reads /proc). */

/** A process's argv, or none if it is gone (or a zombie). */
export const commandLineOf = (pid: number): Option.Option<ReadonlyArray<string>> => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
    if (state === "Z" || state === "X") return Option.none()
    const raw = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
    const argv = raw.split("\0")
    if (argv.at(-1) === "") argv.pop()
    return Option.some(argv)
  } catch {
    return Option.none()
  }
}

export const isAlive = (pid: number) => Option.isSome(commandLineOf(pid))

/** Linux reports process start times in clock ticks of USER_HZ, 100 on every mainstream architecture. */
const USER_HZ = 100

/** How long ago a process started (from /proc), or none if it is gone. */
export const processAgeMs = (pid: number): Option.Option<number> => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces): state is field 3, starttime field 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const startTicks = Number(fields[19])
    const uptimeSeconds = Number(Fs.readFileSync("/proc/uptime", "utf8").split(" ")[0])
    if (!Number.isFinite(startTicks) || !Number.isFinite(uptimeSeconds)) return Option.none()
    return Option.some(Math.max(0, Math.round(uptimeSeconds * 1000 - (startTicks / USER_HZ) * 1000)))
  } catch {
    return Option.none()
  }
}

/**
 * Whether argv is a blctxd serving this installation: `--installation-id <id>` on a daemon entry
 * point. Any entry path matches, so a daemon of an older or moved build is found (and stopped) too.
 */
export const isDaemonOf = (spec: ServiceSpec, argv: ReadonlyArray<string>) => {
  const flag = argv.indexOf("--installation-id")
  return flag > 0 && argv[flag + 1] === spec.installationId && (argv[1] ?? "").endsWith("daemon.js")
}

/** Every live process that is this installation's daemon. */
export const findDaemonPids = (spec: ServiceSpec): ReadonlyArray<number> => {
  let entries: Array<string> = []
  try {
    entries = Fs.readdirSync("/proc")
  } catch {
    return []
  }
  return entries
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => pid !== process.pid && Option.exists(commandLineOf(pid), (argv) => isDaemonOf(spec, argv)))
}

/** The PID recorded by the daemon, if that process is still this installation's daemon. */
export const recordedDaemonPid = (spec: ServiceSpec): Option.Option<number> => {
  try {
    const pid = Number.parseInt(Fs.readFileSync(spec.pidFile, "utf8").trim(), 10)
    return Option.exists(commandLineOf(pid), (argv) => isDaemonOf(spec, argv)) ? Option.some(pid) : Option.none()
  } catch {
    return Option.none()
  }
}

/**
 * Whether something accepts connections on the socket. The bound is generous: on a loaded
 * machine a live daemon may take a while to accept, and "not answering" can lead to a restart.
 */
export const socketAnswers = (path: string, timeoutMs = 3_000) =>
  Effect.async<boolean>((resume) => {
    const socket = Net.createConnection({ path })
    const done = (ok: boolean) => {
      socket.destroy()
      resume(Effect.succeed(ok))
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
  })

/** SIGTERM, then SIGKILL after `graceMs`; returns once the process is gone. */
export const stopProcess = (pid: number, graceMs: number) =>
  Effect.gen(function* () {
    const signal = (sig: NodeJS.Signals) =>
      Effect.sync(() => {
        try {
          process.kill(pid, sig)
        } catch {
          // already gone
        }
      })
    yield* signal("SIGTERM")
    const deadline = Date.now() + graceMs
    while (isAlive(pid) && Date.now() < deadline) yield* Effect.sleep("50 millis")
    if (isAlive(pid)) yield* signal("SIGKILL")
    while (isAlive(pid)) yield* Effect.sleep("20 millis")
  })

/** The last lines of a log file, to show why a daemon did not start. */
export const logTail = (path: string, lines = 5): string => {
  try {
    return Fs.readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return ""
  }
}

export const removeSocketFile = (path: string) => {
  try {
    if (Fs.lstatSync(path).isSocket()) Fs.rmSync(path, { force: true })
  } catch {
    // absent
  }
}
