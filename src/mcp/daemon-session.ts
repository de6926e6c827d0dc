import { Context, type Effect } from "effect"
import type { BlctxClient } from "../rpc/client.js"
import type { DaemonBusy, DaemonUnavailable } from "../rpc/errors.js"

/**
 * The MCP server's one way to its daemon: a protocol session for one tool call. The live layer
 * (`programs/mcp.ts`) is `withDaemon`, which starts a daemon that stopped (the detached
 * supervisor has nobody else to restart it) but never one that was uninstalled; tests give a fake.
 */
export class DaemonSession extends Context.Tag("blctx/mcp/DaemonSession")<
  DaemonSession,
  {
    readonly use: <A, E>(
      use: (client: BlctxClient) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | DaemonUnavailable | DaemonBusy>
  }
>() {}
