import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { Context, Data, Duration, Effect, Layer, ManagedRuntime } from "effect"
import { CALL_DEADLINE_MS, notAnsweringReason, notAnsweringRemediation } from "../../rpc/not-answering.js"
import { UiRpcs } from "../../rpc/ui-protocol.js"

/**
 * The page's client: the daemon's own `UiRpcs` procedures over HTTP POST `/rpc` (JSON), each
 * request carrying the session's CSRF token from the page's meta tag. The session cookie rides
 * along by itself (same origin).
 */

const sessionMeta = () => document.querySelector<HTMLMetaElement>('meta[name="blctx-csrf"]')
const csrfToken = (): string => sessionMeta()?.getAttribute("content") ?? ""
/** The daemon's PID, which it writes beside the CSRF token. */
const daemonPid = (): number | undefined => {
  const text = sessionMeta()?.getAttribute("data-daemon-pid") ?? ""
  return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : undefined
}

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

/**
 * No answer within the deadline every client of the daemon keeps. The listener lives in the
 * daemon's process, so a daemon stopped with SIGSTOP or stuck holds the request open for ever:
 * the page gives up and says so rather than spin.
 */
export class DaemonNotAnswering extends Data.TaggedError("DaemonNotAnswering")<{
  readonly message: string
  readonly remediation: string
}> {}

const notAnswering = () =>
  new DaemonNotAnswering({
    message: `${notAnsweringReason(daemonPid())} (no answer within ${CALL_DEADLINE_MS / 1000} s).`,
    remediation: notAnsweringRemediation(daemonPid())
  })

/** Runs one call against the daemon; a refusal rejects with the tagged error the daemon sent. */
export const call = <A, E>(use: (client: UiClient) => Effect.Effect<A, E>): Promise<A> =>
  daemonRuntime().runPromise(
    Effect.flatMap(Daemon, use).pipe(
      Effect.timeoutFail({ duration: Duration.millis(CALL_DEADLINE_MS), onTimeout: notAnswering })
    )
  )
