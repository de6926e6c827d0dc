import { Schema } from "effect"
import type { DaemonBusy, DaemonUnavailable } from "./errors.js"

/**
 * The daemon that answered is stopping because a file it holds (its database, socket or pidfile)
 * was removed or replaced at its path: what it would read or write there is not what the path
 * holds. The next call starts a fresh daemon on the files at the paths.
 */
export class DaemonStopping extends Schema.TaggedError<DaemonStopping>()("DaemonStopping", {
  path: Schema.String,
  reason: Schema.String,
  remediation: Schema.String
}) {
  override get message() {
    return `${this.reason}; blctxd is stopping. ${this.remediation}`
  }
}

export const DAEMON_STOPPING_REMEDIATION = "Retry: the next call starts a fresh blctxd on the files at their paths."

/** A Ping refused by a daemon stopping for a replaced file (the client reports it as unavailable). */
export const stoppingReason = (e: DaemonUnavailable | DaemonBusy): string | null =>
  e._tag === "DaemonUnavailable" && e.remediation === DAEMON_STOPPING_REMEDIATION ? e.reason : null
