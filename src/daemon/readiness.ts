import { Context, type Effect } from "effect"

/** Tells the service manager how the daemon is doing (systemd: sd_notify READY=1 / STOPPING=1). */
export class Readiness extends Context.Tag("blctx/Readiness")<
  Readiness,
  {
    readonly ready: (status: string) => Effect.Effect<void>
    readonly stopping: Effect.Effect<void>
  }
>() {}
