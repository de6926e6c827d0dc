import { execFile } from "node:child_process"
import { Effect, Layer } from "effect"
import { Readiness } from "../src/daemon/readiness.js"

/**
 * sd_notify from Node: Node has no Unix datagram sockets, so readiness goes through
 * `systemd-notify` (the unit sets NotifyAccess=all, since that helper is a child process).
 * Without NOTIFY_SOCKET (detached supervisor, manual runs) there is nobody to tell.
 */
const notify = (args: ReadonlyArray<string>) =>
  Effect.async<void>((resume) => {
    if (process.env.NOTIFY_SOCKET === undefined || process.env.NOTIFY_SOCKET === "") return resume(Effect.void)
    execFile("systemd-notify", [...args], { timeout: 2_000 }, (error) => {
      resume(
        error === null
          ? Effect.void
          : Effect.logWarning("systemd-notify failed").pipe(Effect.annotateLogs({ error: error.message }))
      )
    })
  })

export const SystemdNotifyReadinessLive = Layer.succeed(Readiness, {
  ready: (status) => notify(["--ready", `--status=${status}`]),
  stopping: notify(["STOPPING=1"])
})
