import * as Http from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import { UiListenError, UiListener } from "../src/ui/server/ui-listener.js"

/**
 * The viewer's listener: Node's HTTP server on 127.0.0.1 only. At close, open connections (a
 * browser keeps some alive) are cut rather than waited for, so the daemon stops within its bound.
 */
export const NodeUiListenerLive = Layer.succeed(UiListener, {
  listen: (port, app) =>
    Effect.gen(function* () {
      let node: Http.Server | undefined
      const server = yield* NodeHttpServer.make(
        () => {
          node = Http.createServer()
          return node
        },
        { host: "127.0.0.1", port }
      ).pipe(
        Effect.mapError(
          (e) => new UiListenError({ port, message: String((e.cause as Error | undefined)?.message ?? e.message) })
        )
      )
      // Added after the server's own release, so it runs first: connections go, then the server.
      yield* Effect.addFinalizer(() => Effect.sync(() => node?.closeAllConnections()))
      yield* server.serve(app)
      return server.address._tag === "TcpAddress" ? server.address.port : port
    })
})
