import { Command } from "@effect/cli"
import { Console, Duration, Effect, Schema } from "effect"
import { withDaemon } from "../daemon/ensure-daemon.js"
import { ExitCode } from "../domain/report.js"
import { DaemonIdentity } from "../rpc/protocol.js"
import { ServiceManager } from "../service/service-manager.js"
import { ExitStatus } from "./exit-status.js"
import { commandDescription } from "./help.js"
import { HISTORY_CALL_TIMEOUT_MS, remainingOfCommandDeadline } from "./history-timeout.js"
import { OutputMode } from "./output-mode.js"

const PING_TIMEOUT = Duration.millis(HISTORY_CALL_TIMEOUT_MS)
const encodeIdentity = Schema.encodeSync(DaemonIdentity)

/**
 * `blctx ping`: one protocol round trip with blctxd, starting it on demand (the detached
 * supervisor restarts a crashed daemon here). Prints who answered and which supervisor runs it.
 */
export const pingCommand = Command.make("ping", {}, () =>
  Effect.gen(function* () {
    const mode = yield* OutputMode
    const exit = yield* ExitStatus
    const manager = yield* ServiceManager
    const [elapsed, result] = yield* Effect.timed(
      Effect.either(
        withDaemon(PING_TIMEOUT, (client) => client.Ping(), {
          reachWithin: Duration.millis(remainingOfCommandDeadline())
        })
      )
    )
    const elapsedMs = Math.round(Duration.toMillis(elapsed))
    if (result._tag === "Left") {
      const e = result.left
      yield* Console.error(`blctx: ${e.message}`)
      if (mode.json) {
        const error =
          e._tag === "DaemonUnavailable" ? { reason: e.reason, remediation: e.remediation } : { reason: e.message }
        yield* Console.log(JSON.stringify({ ok: false, supervisor: manager.kind, error }))
      }
      return yield* exit.set(ExitCode.failed)
    }
    const identity = result.right
    if (mode.json) {
      yield* Console.log(
        JSON.stringify({
          ok: true,
          supervisor: manager.kind,
          round_trip_ms: elapsedMs,
          daemon: encodeIdentity(identity)
        })
      )
    } else {
      yield* Console.log(
        `blctxd PID ${identity.pid} (installation ${identity.installation_id}, schema v${identity.schema_version}) answered in ${elapsedMs} ms under the ${manager.description}`
      )
    }
    yield* exit.set(ExitCode.ok)
  })
).pipe(
  Command.withDescription(
    commandDescription(
      "Check that the blctx daemon answers, starting it when needed",
      "One protocol round trip: prints the daemon's PID, installation and schema version, how long the answer took, and which supervisor runs it. Exit 1 when it does not answer."
    )
  )
)
