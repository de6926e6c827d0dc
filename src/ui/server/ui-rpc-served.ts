import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Effect, Layer } from "effect"
import { UiRpcs } from "../../rpc/ui-protocol.js"
import { UiServer } from "./ui-server.js"

/**
 * The page's part of the daemon's protocol over HTTP (`POST /rpc`, JSON): the same handlers and
 * admission that answer the socket answer here (no second query path). Built after the handlers;
 * when the daemon stops, leaving this layer closes the listener before the handlers go.
 */
export const UiRpcServedLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const app = yield* RpcServer.toHttpApp(UiRpcs).pipe(Effect.provide(RpcSerialization.layerJson))
    yield* Effect.flatMap(UiServer, (ui) => ui.serveRpc(app))
  })
)
