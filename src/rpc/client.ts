/**
 * The typed client for blctxd: `import { connect } from "blctx/client"`.
 *
 * This module is the package's public entry point for other TypeScript tools, so it wires the
 * Node socket transport itself (the one place in `src` that does); everything else about the
 * protocol lives in `protocol.ts`.
 */

import * as Socket from "@effect/platform/Socket"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { type Rpc, RpcClient, type RpcClientError, type RpcGroup, RpcSerialization } from "@effect/rpc"
import { Duration, Effect, Layer, Option, Schedule, type Scope } from "effect"
import { Paths } from "../paths/paths.js"
import { BUSY_RETRY, DAEMON_BUSY_TAG } from "./busy-retry.js"
import { DaemonStopping } from "./daemon-stopping.js"
import { type DaemonBusy, DaemonUnavailable } from "./errors.js"
import { CALL_DEADLINE_MS } from "./not-answering.js"
import { notAnswering } from "./not-answering-error.js"
import { DaemonRpcs } from "./protocol.js"
import { socketPathIn } from "./socket-location.js"

export { ImportNotesResponse } from "../export/import-contract.js"
export {
  ForgetPreviewResponse,
  ForgetResponse,
  ForgetTokenExpired,
  ForgetTokenMismatch,
  InvalidForgetSelector
} from "../forget/forget-contract.js"
export { JobView } from "../jobs/job.js"
// The notes contract whole: its requests, answers and refusals.
export * from "../notes/notes-contract.js"
export { CaptureStatus } from "../retrieval/capture-status.js"
export { ContextResponse } from "../retrieval/context.js"
export { ContextStatusResponse } from "../retrieval/context-status.js"
export { SearchHit, SearchResponse } from "../retrieval/contract.js"
export { ExportPageResponse } from "../retrieval/export-format.js"
export { InvalidQuery } from "../retrieval/invalid-query.js"
export { PromptRecallResponse } from "../retrieval/prompt-recall.js"
export { RecentResponse } from "../retrieval/recent.js"
export {
  DaemonBusy,
  DaemonStoreError,
  DaemonUnavailable,
  InvalidJobParams,
  JobNotFound,
  UnknownJobKind
} from "./errors.js"
export { DaemonIdentity, DaemonRpcs, SubmittedJob } from "./protocol.js"

export interface ConnectOptions {
  /** The daemon's socket; defaults to `$XDG_STATE_HOME/blctx/blctxd.sock`. */
  readonly socketPath?: string
  /**
   * One deadline for every call, from connecting to the answer (default 5 seconds): a call never
   * hangs longer. A daemon that is busy is asked again within it; one that stays silent is
   * reported as not answering, naming its PID.
   */
  readonly timeout?: Duration.DurationInput
}

/** Every procedure of the daemon's group. */
export type DaemonRpc = RpcGroup.Rpcs<typeof DaemonRpcs>

/**
 * A procedure as a caller sees it: the group's payload, success and errors (admission's
 * `DaemonBusy` included), with the transport's failures, and a daemon stopping for a replaced
 * file, reported as `DaemonUnavailable`.
 */
export type DaemonCall<R> =
  R extends Rpc.Rpc<infer _Tag, infer _Payload, infer Success, infer Failure, infer Middleware>
    ? (
        payload: Rpc.PayloadConstructor<R>
      ) => Effect.Effect<
        Success["Type"],
        Exclude<Failure["Type"] | Middleware["failure"]["Type"], DaemonStopping> | DaemonUnavailable
      >
    : never

/** The typed client: one method per procedure of `DaemonRpcs`, named as the procedure (`client.Search`). */
export type BlctxClient = { readonly [R in DaemonRpc as R["_tag"]]: DaemonCall<R> }

export const DEFAULT_REMEDIATION =
  "Check it with `blctx status --step background_service`; start it with `blctx install codex --step background_service`."

const unavailable = (socket: string, reason: string, notRunning = false) =>
  new DaemonUnavailable({ socket, reason, remediation: DEFAULT_REMEDIATION, not_running: notRunning })

const hasTag = <T extends string>(e: unknown, tag: T): e is { readonly _tag: T } =>
  typeof e === "object" && e !== null && "_tag" in e && e._tag === tag

const isBusy = (e: unknown): e is DaemonBusy => hasTag(e, DAEMON_BUSY_TAG)

/** A busy daemon is asked again after a short, jittered and growing pause (`busy-retry.ts`). */
const BUSY_RETRY_SCHEDULE = Schedule.exponential(Duration.millis(BUSY_RETRY.firstPauseMs), BUSY_RETRY.factor).pipe(
  Schedule.jittered,
  Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.millis(BUSY_RETRY.maxPauseMs)))
)

const clientLayer = (socket: Layer.Layer<Socket.Socket, Socket.SocketError>) =>
  RpcClient.layerProtocolSocket().pipe(Layer.provide(socket), Layer.provide(RpcSerialization.layerNdjson))

/** Resolves the default socket path from the environment (HOME / XDG_STATE_HOME). */
export const defaultSocketPath = Effect.map(Paths, (p) => socketPathIn(p.stateDir)).pipe(
  Effect.provide(Paths.Default),
  Effect.orDie
)

/** What a failed call tells its caller: a transport failure or a stopping daemon is the daemon being unavailable. */
const callFailure = (socket: string, e: unknown): unknown => {
  if (hasTag(e, "RpcClientError")) {
    const error = e as RpcClientError.RpcClientError
    return overloaded(error) ? notAnswering(socket) : unavailable(socket, describe(error), notListening(error))
  }
  if (e instanceof DaemonStopping) {
    // withDaemon starts a fresh daemon on the files at the paths.
    return new DaemonUnavailable({ socket, reason: `${e.reason}; blctxd is stopping`, remediation: e.remediation })
  }
  return e
}

/**
 * One deadline per call: busy answers are retried inside it, and when it passes the caller hears
 * the last busy answer, or that the daemon is not answering.
 */
const bounded =
  (socket: string, deadline: Duration.Duration) =>
  <A, E>(call: Effect.Effect<A, E>): Effect.Effect<A, unknown> => {
    let lastBusy: DaemonBusy | undefined
    return call.pipe(
      Effect.tapError((e) =>
        Effect.sync(() => {
          if (isBusy(e)) lastBusy = e
        })
      ),
      Effect.retry({ while: isBusy, schedule: BUSY_RETRY_SCHEDULE }),
      Effect.timeoutFail({ duration: deadline, onTimeout: (): unknown => lastBusy ?? notAnswering(socket) }),
      Effect.mapError((e) => callFailure(socket, e)),
      // @effect/rpc's socket protocol turns a failed write into a defect; a write fails when the
      // daemon went away under the connection (a crash, a kill -9 still being torn down).
      Effect.catchSomeDefect((defect) =>
        Socket.isSocketError(defect)
          ? Option.some(Effect.fail(unavailable(socket, `the connection was lost: ${lostBecause(defect)}`)))
          : Option.none()
      )
    )
  }

/**
 * The typed client over any client of the group (the socket's, or `RpcTest.makeClient`'s in
 * tests): every procedure of `DaemonRpcs`, each call bounded by `timeout` at the daemon behind
 * `socketPath`. Derived from the group, so a new procedure needs no line here.
 */
export const boundClient = <E>(
  client: RpcClient.RpcClient<DaemonRpc, E>,
  options: { readonly socketPath: string; readonly timeout?: Duration.DurationInput | undefined }
): BlctxClient => {
  const limit = bounded(options.socketPath, Duration.decode(options.timeout ?? Duration.millis(CALL_DEADLINE_MS)))
  const calls = client as unknown as Record<string, (payload: unknown) => Effect.Effect<unknown, unknown>>
  const call = (tag: string) => (payload: unknown) =>
    Effect.suspend(() => limit(calls[tag]?.(payload) ?? Effect.die(tag)))
  // The group's procedures, each given the same deadline; their types are BlctxClient's by construction.
  return Object.fromEntries([...DaemonRpcs.requests.keys()].map((tag) => [tag, call(tag)])) as unknown as BlctxClient
}

/**
 * Connects to blctxd for the life of the scope. Every call is bounded by `timeout`; a daemon that
 * is not running or does not answer is a `DaemonUnavailable` error with a remediation.
 */
export const connect = (options: ConnectOptions = {}) =>
  Effect.gen(function* () {
    const socket = options.socketPath ?? (yield* defaultSocketPath)
    return yield* connectOver(NodeSocket.layerNet({ path: socket }), { ...options, socketPath: socket })
  })

/** `connect` over a given transport to the daemon at `options.socketPath` (tests give a failing one). */
export const connectOver = (
  transport: Layer.Layer<Socket.Socket, Socket.SocketError>,
  options: ConnectOptions & { readonly socketPath: string }
): Effect.Effect<BlctxClient, DaemonUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(clientLayer(transport)).pipe(
      Effect.mapError((e) => unavailable(options.socketPath, `could not open the socket: ${e.message}`))
    )
    const client = yield* RpcClient.make(DaemonRpcs).pipe(Effect.provide(context))
    return boundClient(client, options)
  })

const errorCode = (e: RpcClientError.RpcClientError): unknown =>
  (e.cause as { readonly cause?: { readonly code?: unknown } } | undefined)?.cause?.code

/** Nothing listens on the socket: no file there, or a stale one that refuses connections. */
const notListening = (e: RpcClientError.RpcClientError) => {
  const code = errorCode(e)
  return code === "ENOENT" || code === "ECONNREFUSED"
}

/** The kernel's queue of connections waiting to be accepted is full: the daemon is there, not accepting. */
const overloaded = (e: RpcClientError.RpcClientError) => errorCode(e) === "EAGAIN"

const describe = (e: RpcClientError.RpcClientError): string => {
  const code = errorCode(e)
  if (code === "ENOENT") return "no socket (the daemon is not running)"
  if (code === "ECONNREFUSED") return "connection refused (the daemon is not running; a stale socket remains)"
  if (code === "EACCES") return "permission denied on the socket"
  return e.message
}

const lostBecause = (error: Socket.SocketError): string => {
  const code = "cause" in error ? (error.cause as { readonly code?: unknown } | undefined)?.code : undefined
  return typeof code === "string" ? `${error.message} (${code})` : error.message
}

/** Connects, runs `use`, and disconnects. */
export const withClient = <A, E, R>(
  options: ConnectOptions,
  use: (client: BlctxClient) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | DaemonUnavailable, Exclude<R, Scope.Scope>> =>
  Effect.scoped(Effect.flatMap(connect(options), use))
