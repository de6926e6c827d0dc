import { type Duration, Effect, Option } from "effect"
import { ProgramPaths } from "../installer/program-paths.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"
import type { BlctxClient } from "../rpc/client.js"
import { DaemonConnector } from "../rpc/daemon-connector.js"
import { DaemonUnavailable } from "../rpc/errors.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { ServiceManager } from "../service/service-manager.js"
import { makeServiceSpec } from "../service/service-spec.js"

/**
 * A protocol session with this installation's daemon, started on demand: when the socket does
 * not answer (a crashed detached daemon, a stopped unit), the service manager starts it and the
 * session is tried once more. For commands and hooks that need the daemon; `status` never uses
 * this, since it must not change anything. `use` may run twice, so keep it idempotent.
 */
export const withDaemon = <A, E, R>(
  timeout: Duration.DurationInput,
  use: (client: BlctxClient) => Effect.Effect<A, E, R>
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
    const session = connector.withClient({ socketPath, timeout }, use)
    return yield* session.pipe(
      Effect.catchIf(
        (e): e is DaemonUnavailable => e instanceof DaemonUnavailable,
        (first) =>
          Effect.gen(function* () {
            yield* Effect.logDebug("restarting blctxd on demand").pipe(Effect.annotateLogs({ reason: first.reason }))
            yield* manager.ensureRunning(spec).pipe(
              Effect.mapError(
                (e) =>
                  new DaemonUnavailable({
                    socket: socketPath,
                    reason: `${first.reason}; starting it under the ${manager.description} failed: ${e.detail}`,
                    remediation: e.remediation
                  })
              )
            )
            return yield* session
          })
      )
    )
  })
