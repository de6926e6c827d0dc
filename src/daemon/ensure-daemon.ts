import { Duration, Effect, Either, Option } from "effect"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"
import { ProgramPaths } from "../paths/program-paths.js"
import type { BlctxClient } from "../rpc/client.js"
import { DaemonConnector } from "../rpc/daemon-connector.js"
import { type DaemonBusy, DaemonUnavailable } from "../rpc/errors.js"
import { CALL_DEADLINE_MS } from "../rpc/not-answering.js"
import { notAnswering } from "../rpc/not-answering-error.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { ServiceManager } from "../service/service-manager.js"
import { makeServiceSpec } from "../service/service-spec.js"

/** The first Ping of a session: whether the daemon answered at all, before anything is asked of it. */
type Reached<A, E> =
  | { readonly _tag: "Unreached"; readonly error: DaemonUnavailable }
  | { readonly _tag: "Done"; readonly result: Either.Either<A, E> }

/** How many times a daemon that could not be reached is started again before the call gives up. */
const START_ATTEMPTS = 2

/** The first Ping is bounded by the call deadline even when `use` is given longer. */
const REACH_DEADLINE = Duration.millis(CALL_DEADLINE_MS)

/**
 * Whether an unreached daemon may be started: not when it accepted the connection and stayed
 * silent (stopped, hung, overloaded). Another start would find it "answering" and wait for it.
 */
const worthStarting = (error: DaemonUnavailable) => !error.not_answering

/**
 * A protocol session with this installation's daemon, started on demand: when the daemon does
 * not answer a first Ping (a crashed detached daemon, a stopped unit), the service manager starts
 * it and the session is opened again, up to `START_ATTEMPTS` times: a daemon killed a moment ago
 * may still accept connections while its last threads exit (then drop them), and the manager,
 * seeing a socket that answers, starts nothing the first time. A daemon that accepts the
 * connection but does not answer the Ping by the call deadline is not started again: the call
 * fails at once, naming its PID (`not_answering`). Only reaching the daemon is
 * retried: `use` runs at most once, so a request that is not safe to repeat (submitting a job) is
 * never sent twice, even when one of its answers is slow. For commands and hooks that need the
 * daemon; `status` never uses this, since it must not change anything.
 */
export const withDaemon = <A, E, R>(
  timeout: Duration.DurationInput,
  use: (client: BlctxClient) => Effect.Effect<A, E, R>,
  options: { readonly reachWithin?: Duration.DurationInput } = {}
) =>
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const paths = yield* Paths
    const programs = yield* ProgramPaths
    const manager = yield* ServiceManager
    const connector = yield* DaemonConnector
    const socketPath = socketPathIn(paths.stateDir)
    const notInstalled = (reason: string) =>
      new DaemonUnavailable({ socket: socketPath, reason, remediation: "Run: blctx install codex" })
    const manifest = yield* manifests
      .read()
      .pipe(Effect.mapError((e) => notInstalled(`manifest unreadable (${e._tag})`)))
    if (Option.isNone(manifest) || manifest.value.state !== "active") {
      return yield* notInstalled("blctx is not installed (no active manifest)")
    }
    const spec = makeServiceSpec({
      installationId: manifest.value.installation_id,
      paths,
      node: programs.node,
      daemon: programs.daemon
    })
    const reach = Duration.min(Duration.decode(timeout), Duration.decode(options.reachWithin ?? REACH_DEADLINE))
    const session: Effect.Effect<Reached<A, E | DaemonUnavailable | DaemonBusy>, never, R> = connector
      .withClient({ socketPath, timeout }, (client) =>
        Effect.gen(function* () {
          // A first Ping answers fast or not at all: its deadline is the shorter reach.
          const reached = yield* Effect.either(
            client.Ping().pipe(Effect.timeoutFail({ duration: reach, onTimeout: () => notAnswering(socketPath) }))
          )
          if (Either.isLeft(reached)) {
            // Ping is never refused as busy; should it be, the daemon was reached.
            if (reached.left._tag === "DaemonBusy") return { _tag: "Done", result: Either.left(reached.left) } as const
            return { _tag: "Unreached", error: reached.left } as const
          }
          return { _tag: "Done", result: yield* Effect.either(use(client)) } as const
        })
      )
      .pipe(Effect.catchAll((error) => Effect.succeed({ _tag: "Unreached", error } as const)))

    let reached = yield* session
    for (
      let attempt = 1;
      attempt <= START_ATTEMPTS && reached._tag === "Unreached" && worthStarting(reached.error);
      attempt++
    ) {
      const unreached = reached.error
      yield* Effect.logDebug("restarting blctxd on demand").pipe(Effect.annotateLogs({ reason: unreached.reason }))
      yield* manager.ensureRunning(spec).pipe(
        Effect.mapError(
          (e) =>
            new DaemonUnavailable({
              socket: socketPath,
              reason: `${unreached.reason}; starting it under the ${manager.description} failed: ${e.detail}`,
              remediation: e.remediation
            })
        )
      )
      reached = yield* session
    }
    return yield* reached._tag === "Done" ? reached.result : Effect.fail(reached.error)
  })
