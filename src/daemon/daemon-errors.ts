import { Data } from "effect"

/** blctxd refused to start or failed while starting; printed on stderr, exit status non-zero. */
export class DaemonStartupError extends Data.TaggedError("DaemonStartupError")<{
  readonly reason: string
  readonly remediation: string
}> {
  override get message() {
    return `${this.reason}. ${this.remediation}`
  }
}
