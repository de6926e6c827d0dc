import { Schema } from "effect"
import { DAEMON_BUSY_TAG } from "./busy-retry.js"

/**
 * The daemon could not answer: not running, not reachable, or running but silent by the deadline
 * (`not_answering`: stopped, hung or overloaded; never started again). Says what to do.
 */
export class DaemonUnavailable extends Schema.TaggedError<DaemonUnavailable>()("DaemonUnavailable", {
  socket: Schema.String,
  reason: Schema.String,
  remediation: Schema.String,
  /** True only when nothing listens on the socket (no file, or connection refused): not for a slow daemon. */
  not_running: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** True when the daemon accepted the connection but did not answer by the deadline. */
  not_answering: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {
  override get message() {
    return `blctx daemon at ${this.socket} is unavailable: ${this.reason}. ${this.remediation}`
  }
}

/**
 * The daemon is running and answering but has more requests in hand than it takes (admission
 * control, `src/daemon/admission.ts`): this one was refused at once, before any work. Retryable:
 * the client retries within its deadline, then reports this (never "unavailable").
 */
export class DaemonBusy extends Schema.TaggedError<DaemonBusy>()(DAEMON_BUSY_TAG, {
  in_flight: Schema.Int,
  limit: Schema.Int,
  remediation: Schema.String
}) {
  override get message() {
    return `blctxd is busy (${this.in_flight} requests in hand, limit ${this.limit}). ${this.remediation}`
  }
}

export const daemonBusy = (inFlight: number, limit: number) =>
  new DaemonBusy({ in_flight: inFlight, limit, remediation: "Retry in a moment." })

export class UnknownJobKind extends Schema.TaggedError<UnknownJobKind>()("UnknownJobKind", {
  kind: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  override get message() {
    return `unknown job kind ${this.kind}; this daemon runs: ${this.known.join(", ")}`
  }
}

export class InvalidJobParams extends Schema.TaggedError<InvalidJobParams>()("InvalidJobParams", {
  kind: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `invalid params for job kind ${this.kind}: ${this.reason}`
  }
}

export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", {
  job_id: Schema.String
}) {
  override get message() {
    return `no job ${this.job_id}`
  }
}

/** The daemon's database failed while answering; names the file so a person can look. */
export class DaemonStoreError extends Schema.TaggedError<DaemonStoreError>()("DaemonStoreError", {
  path: Schema.String,
  reason: Schema.String,
  remediation: Schema.String
}) {
  override get message() {
    return `database ${this.path}: ${this.reason}. ${this.remediation}`
  }
}

/** A database failure inside the daemon, as the protocol reports it. */
export const daemonStoreError = (e: { readonly path: string; readonly message: string }) =>
  new DaemonStoreError({
    path: e.path,
    reason: e.message,
    remediation: "Run `blctx doctor` and check the daemon's log (journalctl --user or the state directory)."
  })
