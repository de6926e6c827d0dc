import { Context } from "effect"

/** Facts about this daemon process, reported by Ping. */
export class DaemonProcess extends Context.Tag("blctx/DaemonProcess")<
  DaemonProcess,
  {
    readonly pid: number
    readonly node: string
    readonly argv: ReadonlyArray<string>
  }
>() {}
