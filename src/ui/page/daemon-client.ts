import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { UiRpcs } from "../../rpc/ui-protocol.js"

/**
 * The page's client: the daemon's own `UiRpcs` procedures over HTTP POST `/rpc` (JSON), each
 * request carrying the session's CSRF token from the page's meta tag. The session cookie rides
 * along by itself (same origin).
 */

const csrfToken = (): string =>
  document.querySelector<HTMLMetaElement>('meta[name="blctx-csrf"]')?.getAttribute("content") ?? ""

const makeClient = RpcClient.make(UiRpcs)
export type UiClient = Effect.Effect.Success<typeof makeClient>

export class Daemon extends Context.Tag("blctx/ui/Daemon")<Daemon, UiClient>() {}

const protocol = (token: string) =>
  RpcClient.layerProtocolHttp({
    url: "/rpc",
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-blctx-csrf", token))
  }).pipe(Layer.provide([FetchHttpClient.layer, RpcSerialization.layerJson]))

/** Made at the first call, when the page (and its CSRF meta tag) is there. */
let runtime: ManagedRuntime.ManagedRuntime<Daemon, never> | undefined
const daemonRuntime = () => {
  runtime ??= ManagedRuntime.make(Layer.scoped(Daemon, makeClient).pipe(Layer.provide(protocol(csrfToken()))))
  return runtime
}

/** Runs one call against the daemon; a refusal rejects with the tagged error the daemon sent. */
export const call = <A, E>(use: (client: UiClient) => Effect.Effect<A, E>): Promise<A> =>
  daemonRuntime().runPromise(Effect.flatMap(Daemon, use))
