import { Context, type Duration, type Effect } from "effect"
import type { BlctxClient } from "./client.js"
import type { DaemonUnavailable } from "./errors.js"

/** Opens a bounded protocol session with blctxd (the CLI's steps use this, never a raw socket). */
export class DaemonConnector extends Context.Tag("blctx/DaemonConnector")<
  DaemonConnector,
  {
    readonly withClient: <A, E, R>(
      options: { readonly socketPath: string; readonly timeout: Duration.DurationInput },
      use: (client: BlctxClient) => Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | DaemonUnavailable, R>
  }
>() {}
