import * as Fs from "node:fs"
import * as Net from "node:net"
import { Command } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Data, Duration, Effect, Either, Option, Schedule, Stream } from "effect"
import type { ServiceSpec } from "../src/service/service-spec.js"

/** Linux process helpers shared by the supervisor layers: the /proc table, polling, short commands. */

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
 * Whether argv is a blctxd serving this installation: `--installation-id <id>` after a daemon
 * entry point (node's own flags may come first). Any entry path matches, so a daemon of an older
 * or moved build is found (and stopped) too.
 */
export const isDaemonOf = (spec: ServiceSpec, argv: ReadonlyArray<string>) => {
  const flag = argv.indexOf("--installation-id")
  const entry = argv.findIndex((arg, i) => i > 0 && !arg.startsWith("-") && arg.endsWith("daemon.js"))
  return flag > 0 && entry > 0 && entry < flag && argv[flag + 1] === spec.installationId
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
export const socketAnswers = (path: string, timeout: Duration.DurationInput = "3 seconds") =>
  Effect.async<boolean>((resume) => {
    const socket = Net.createConnection({ path })
    const done = (ok: boolean) => {
      socket.destroy()
      resume(Effect.succeed(ok))
    }
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
    return Effect.sync(() => socket.destroy())
  }).pipe(Effect.timeoutTo({ duration: timeout, onTimeout: () => false, onSuccess: (ok) => ok }))

class NotYet extends Data.TaggedError("NotYet") {}

/**
 * Runs `check` every `every` until it returns a value, for at most `limit` (Effect time, so
 * TestClock drives it); none when the limit passed first. A check in progress is never cut
 * short: the limit only decides whether another one starts.
 */
export const pollUntil = <A, E, R>(
  check: Effect.Effect<Option.Option<A>, E, R>,
  every: Duration.DurationInput,
  limit: Duration.DurationInput
): Effect.Effect<Option.Option<A>, E, R> =>
  check.pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(new NotYet()), onSome: Effect.succeedSome })),
    Effect.retry({
      while: (e: E | NotYet) => e instanceof NotYet,
      schedule: Schedule.spaced(every).pipe(Schedule.upTo(limit))
    }),
    Effect.catchIf(
      (e): e is NotYet => e instanceof NotYet,
      () => Effect.succeedNone
    )
  )

/** Waits (unbounded) until the process is gone. */
const awaitGone = (pid: number) =>
  Effect.repeat(
    Effect.sync(() => isAlive(pid)),
    { while: (alive) => alive, schedule: Schedule.spaced("20 millis") }
  )

/** SIGTERM, then SIGKILL after `grace`; returns once the process is gone. */
export const stopProcess = (pid: number, grace: Duration.DurationInput) =>
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
    const gone = yield* pollUntil(
      Effect.sync(() => (isAlive(pid) ? Option.none() : Option.some(true))),
      "50 millis",
      grace
    )
    if (Option.isNone(gone)) yield* signal("SIGKILL")
    yield* awaitGone(pid)
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

/** How a short command (systemctl, systemd-notify) ended. */
export interface CommandResult {
  /** The exit status; 1 when it could not start, died of a signal or ran out of time. */
  readonly code: number
  readonly stdout: string
  /** What it wrote on stderr, or why it has no status of its own. */
  readonly stderr: string
}

const textOf = (stream: Stream.Stream<Uint8Array, PlatformError>) =>
  stream.pipe(
    Stream.decodeText(),
    Stream.mkString,
    Effect.orElseSucceed(() => "")
  )

/**
 * Runs a short command to completion through @effect/platform's `Command`, collecting its output.
 * It never fails: a command that cannot start, dies of a signal or outlives `timeout` (its process
 * group is then killed) is reported with status 1 and the reason on stderr.
 */
export const runCommand = (command: Command.Command, timeout: Duration.DurationInput) =>
  Effect.scoped(
    Effect.gen(function* () {
      const child = yield* Command.start(command)
      const finished = yield* Effect.all([textOf(child.stdout), textOf(child.stderr), Effect.either(child.exitCode)], {
        concurrency: "unbounded"
      }).pipe(Effect.timeoutOption(timeout))
      if (Option.isNone(finished)) {
        yield* child.kill("SIGKILL").pipe(Effect.ignore)
        return { code: 1, stdout: "", stderr: `no answer within ${Duration.format(timeout)}` }
      }
      const [stdout, stderr, exit] = finished.value
      return Either.match(exit, {
        onLeft: (error): CommandResult => ({ code: 1, stdout, stderr: stderr || error.message }),
        onRight: (code): CommandResult => ({ code, stdout, stderr })
      })
    })
  ).pipe(Effect.catchAll((error) => Effect.succeed<CommandResult>({ code: 1, stdout: "", stderr: error.message })))
