import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Effect, Layer } from "effect"
import { SocketBindError, SocketBinder } from "../src/daemon/socket-binder.js"

/**
 * Listens on a Unix socket. The file gets its mode from the process umask at bind time, which
 * blctxd sets to 0177 before anything else (so the socket is 0600 from its first instant).
 */
export const NodeSocketBinderLive = Layer.succeed(SocketBinder, {
  bind: (path) =>
    NodeSocketServer.make({ path }).pipe(
      Effect.mapError(
        (e) => new SocketBindError({ path, message: String((e.cause as Error | undefined)?.message ?? e.message) })
      )
    )
})
