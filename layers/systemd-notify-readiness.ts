import { Command, CommandExecutor } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer } from "effect"
import { Readiness } from "../src/daemon/readiness.js"
import { runCommand } from "./daemon-process-table.js"

/**
 * sd_notify from Node: Node has no Unix datagram sockets, so readiness goes through
 * `systemd-notify` (the unit sets NotifyAccess=all, since that helper is a child process).
 * Without NOTIFY_SOCKET (detached supervisor, manual runs) there is nobody to tell. A helper that
 * fails or takes over 2 s is logged and otherwise ignored: readiness is advisory.
 */
export const makeSystemdNotifyReadiness = (executable = "systemd-notify") =>
  Layer.effect(
    Readiness,
    Effect.gen(function* () {
      const executor = yield* CommandExecutor.CommandExecutor
      const notify = (args: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          if (process.env.NOTIFY_SOCKET === undefined || process.env.NOTIFY_SOCKET === "") return
          const result = yield* runCommand(Command.make(executable, ...args), "2 seconds")
          if (result.code !== 0) {
            yield* Effect.logWarning("systemd-notify failed").pipe(
              Effect.annotateLogs({ error: result.stderr.trim() || `exit status ${result.code}` })
            )
          }
        }).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
      return Readiness.of({
        ready: (status) => notify(["--ready", `--status=${status}`]),
        stopping: notify(["STOPPING=1"])
      })
    })
  )

/** The real `systemd-notify` (or the fake manager's stand-in on PATH), run through Node's CommandExecutor. */
export const SystemdNotifyReadinessLive = makeSystemdNotifyReadiness().pipe(
  Layer.provide(NodeCommandExecutor.layer),
  Layer.provide(NodeFileSystem.layer)
)
