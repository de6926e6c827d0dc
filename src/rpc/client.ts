/**
 * The typed client for blctxd: `import { connect } from "blctx/client"`.
 *
 * This module is the package's public entry point for other TypeScript tools, so it wires the
 * Node socket transport itself (the one place in `src` that does); everything else about the
 * protocol lives in `protocol.ts`.
 */

import * as Socket from "@effect/platform/Socket"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { RpcClient, type RpcClientError, RpcSerialization } from "@effect/rpc"
import { Duration, Effect, Layer, Option, Schedule, type Scope } from "effect"
import type { JobId } from "../jobs/job.js"
import { Paths } from "../paths/paths.js"
import { type DaemonBusy, DaemonUnavailable } from "./errors.js"
import { CALL_DEADLINE_MS, notAnsweringReason, notAnsweringRemediation, recordedPidBeside } from "./not-answering.js"
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
export {
  ListNotesResponse,
  LogUpdateResponse,
  NoteHistoryResponse,
  OpenSessionResponse,
  SessionBindingConflict,
  StaleRevision,
  UnknownContextSession,
  UnknownNote,
  UpdateConflict,
  UpdateNoteResponse
} from "../notes/notes-contract.js"
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

export const DEFAULT_REMEDIATION =
  "Check it with `blctx status --step background_service`; start it with `blctx install codex --step background_service`."

const unavailable = (socket: string, reason: string, notRunning = false) =>
  new DaemonUnavailable({ socket, reason, remediation: DEFAULT_REMEDIATION, not_running: notRunning })

/** Connected (or queued by the kernel) but no answer by the deadline: the process is there, silent. */
const notAnswering = (socket: string) => {
  const pid = recordedPidBeside(socket)
  return new DaemonUnavailable({
    socket,
    reason: notAnsweringReason(pid),
    remediation: notAnsweringRemediation(pid),
    not_answering: true
  })
}

const isBusy = (e: unknown): e is DaemonBusy =>
  typeof e === "object" && e !== null && "_tag" in e && e._tag === "DaemonBusy"

/** A busy daemon is asked again after a short, jittered and growing pause (at most a second). */
const BUSY_RETRY = Schedule.exponential("50 millis", 1.6).pipe(
  Schedule.jittered,
  Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.seconds(1)))
)

const clientLayer = (socket: Layer.Layer<Socket.Socket, Socket.SocketError>) =>
  RpcClient.layerProtocolSocket().pipe(Layer.provide(socket), Layer.provide(RpcSerialization.layerNdjson))

/** Resolves the default socket path from the environment (HOME / XDG_STATE_HOME). */
export const defaultSocketPath = Effect.map(Paths, (p) => socketPathIn(p.stateDir)).pipe(
  Effect.provide(Paths.Default),
  Effect.orDie
)

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
) =>
  Effect.gen(function* () {
    const socket = options.socketPath
    const timeout = Duration.decode(options.timeout ?? Duration.millis(CALL_DEADLINE_MS))
    const context = yield* Layer.build(clientLayer(transport)).pipe(
      Effect.mapError((e) => unavailable(socket, `could not open the socket: ${e.message}`))
    )
    const client = yield* RpcClient.make(DaemonRpcs).pipe(Effect.provide(context))

    // One deadline per call: busy answers are retried inside it, and when it passes the caller
    // hears the last busy answer, or that the daemon is not answering.
    const bounded = <A, E>(
      call: Effect.Effect<A, E | RpcClientError.RpcClientError>,
      deadline: Duration.Duration = timeout
    ) => {
      let lastBusy: DaemonBusy | undefined
      return call.pipe(
        Effect.tapError((e) =>
          Effect.sync(() => {
            if (isBusy(e)) lastBusy = e
          })
        ),
        Effect.retry({ while: isBusy, schedule: BUSY_RETRY }),
        Effect.timeoutFail({
          duration: deadline,
          onTimeout: (): E | DaemonUnavailable => (lastBusy as E | undefined) ?? notAnswering(socket)
        }),
        Effect.catchIf(
          (e): e is RpcClientError.RpcClientError =>
            typeof e === "object" && e !== null && "_tag" in e && e._tag === "RpcClientError",
          (e) => Effect.fail(overloaded(e) ? notAnswering(socket) : unavailable(socket, describe(e), notListening(e)))
        ),
        // @effect/rpc's socket protocol turns a failed write into a defect; a write fails when the
        // daemon went away under the connection (a crash, a kill -9 still being torn down).
        Effect.catchSomeDefect((defect) =>
          Socket.isSocketError(defect)
            ? Option.some(Effect.fail(unavailable(socket, `the connection was lost: ${lostBecause(defect)}`)))
            : Option.none()
        )
      ) as Effect.Effect<A, Exclude<E, RpcClientError.RpcClientError> | DaemonUnavailable>
    }

    return {
      socketPath: socket,
      /**
       * `within` shortens the deadline for this Ping (a first Ping answers fast or not at all). A
       * daemon stopping for a replaced file is unavailable: withDaemon starts a fresh one.
       */
      ping: (within?: Duration.DurationInput) =>
        bounded(client.Ping(), within === undefined ? timeout : Duration.min(timeout, Duration.decode(within))).pipe(
          Effect.catchTag("DaemonStopping", (e) =>
            Effect.fail(
              new DaemonUnavailable({ socket, reason: `${e.reason}; blctxd is stopping`, remediation: e.remediation })
            )
          )
        ),
      submitJob: (input: { readonly kind: string; readonly params?: unknown; readonly supersede?: boolean }) =>
        bounded(client.SubmitJob({ kind: input.kind, params: input.params, supersede: input.supersede ?? false })),
      jobStatus: (jobId: JobId) => bounded(client.JobStatus({ job_id: jobId })),
      cancelJobs: (selector: { readonly job_ids?: ReadonlyArray<JobId>; readonly kind?: string }) =>
        bounded(client.CancelJobs(selector)),
      search: (request: Parameters<typeof client.Search>[0]) => bounded(client.Search(request)),
      recent: (request: Parameters<typeof client.Recent>[0]) => bounded(client.Recent(request)),
      context: (request: Parameters<typeof client.Context>[0]) => bounded(client.Context(request)),
      contextStatus: () => bounded(client.ContextStatus()),
      promptRecall: (request: Parameters<typeof client.PromptRecall>[0]) => bounded(client.PromptRecall(request)),
      openSession: (request: Parameters<typeof client.OpenSession>[0]) => bounded(client.OpenSession(request)),
      logUpdate: (request: Parameters<typeof client.LogUpdate>[0]) => bounded(client.LogUpdate(request)),
      exportPage: (request: Parameters<typeof client.ExportPage>[0]) => bounded(client.ExportPage(request)),
      importNotes: (request: Parameters<typeof client.ImportNotes>[0]) => bounded(client.ImportNotes(request)),
      updateNote: (request: Parameters<typeof client.UpdateNote>[0]) => bounded(client.UpdateNote(request)),
      noteHistory: (request: Parameters<typeof client.NoteHistory>[0]) => bounded(client.NoteHistory(request)),
      listNotes: (request: Parameters<typeof client.ListNotes>[0]) => bounded(client.ListNotes(request)),
      forgetPreview: (request: Parameters<typeof client.ForgetPreview>[0]) => bounded(client.ForgetPreview(request)),
      forget: (request: Parameters<typeof client.Forget>[0]) => bounded(client.Forget(request))
    }
  })

export type BlctxClient = Effect.Effect.Success<ReturnType<typeof connect>>

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
