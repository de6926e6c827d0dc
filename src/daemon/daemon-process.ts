import { Context, type Effect } from "effect"

/** Facts about this daemon process, reported by Ping, and how it asks itself to stop. */
export class DaemonProcess extends Context.Tag("blctx/DaemonProcess")<
  DaemonProcess,
  {
    readonly pid: number
    readonly node: string
    readonly argv: ReadonlyArray<string>
    /** Starts the same graceful shutdown as a SIGTERM from the service manager. */
    readonly requestStop: Effect.Effect<void>
  }
>() {}
