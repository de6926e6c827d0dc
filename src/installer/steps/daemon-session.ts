import { Duration, Effect } from "effect"
import type { Manifest } from "../../ownership/manifest.js"
import { Paths } from "../../paths/paths.js"
import type { BlctxClient } from "../../rpc/client.js"
import { DaemonConnector } from "../../rpc/daemon-connector.js"
import { socketPathIn } from "../../rpc/socket-location.js"
import { serviceName } from "../../service/service-spec.js"
import { describeError, fail, type StepFailure } from "../step.js"

const RESTART = "Restart it: blctx install codex --step background_service"

/**
 * A bounded protocol session with this installation's blctxd, for the steps that ask it
 * something: every failure (no answer, an error, the bound elapsed) becomes a StepFailure saying
 * what was tried, on which socket, and where the daemon's log is.
 */
export const daemonSession = Effect.gen(function* () {
  const paths = yield* Paths
  const connector = yield* DaemonConnector
  const socketPath = socketPathIn(paths.stateDir)

  const logHint = (m: Manifest) =>
    `its log: journalctl --user -u ${serviceName(m.installation_id)} (systemd) or ${paths.stateDir}/blctxd.log (detached)`
  const unavailable = (m: Manifest, tried: string) => (e: unknown) =>
    fail(
      `blctxd on ${socketPath} did not answer (${tried}): ${describeError(e)}`,
      `Check the service: blctx status --step background_service; ${RESTART}; ${logHint(m)}.`,
      typeof e === "object" && e !== null && "_tag" in e && typeof e._tag === "string" ? e._tag : undefined
    )
  /** Bounds one phase of the round trip; a timeout names the phase, the bound and the socket. */
  const within = <A>(
    m: Manifest,
    tried: string,
    bound: Duration.Duration,
    effect: Effect.Effect<A, StepFailure>
  ): Effect.Effect<A, StepFailure> =>
    effect.pipe(
      Effect.timeoutFail({
        duration: bound,
        onTimeout: () =>
          fail(
            `blctxd on ${socketPath} did not finish ${tried} within ${Duration.format(bound)}; it may be overloaded or hung`,
            `Check the service: blctx status --step background_service; ${RESTART} if it stays slow; ${logHint(m)}.`,
            "TimeoutException"
          )
      })
    )
  /** Runs `use` against the daemon within `bound`. */
  const session = <A, E>(
    m: Manifest,
    tried: string,
    bound: Duration.Duration,
    use: (c: BlctxClient) => Effect.Effect<A, E>
  ) =>
    within(
      m,
      tried,
      bound,
      connector.withClient({ socketPath, timeout: bound }, use).pipe(Effect.mapError(unavailable(m, tried)))
    )

  return { socketPath, logHint, session } as const
})
