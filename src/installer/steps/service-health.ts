import { randomUUID } from "node:crypto"
import { Clock, Duration, Effect, Option } from "effect"
import { JobId } from "../../jobs/job.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { DaemonConnector } from "../../rpc/daemon-connector.js"
import { socketPathIn } from "../../rpc/socket-location.js"
import { CURRENT_SCHEMA_VERSION } from "../../store/migrations.js"
import { fail, type Step } from "../step.js"

/** The whole round trip (connect, Ping, a database read) must finish within this. */
export const HEALTH_TIMEOUT = Duration.seconds(2)

/**
 * A bounded protocol round trip: Ping must name this installation, its database and the
 * current schema version, and a read through the query workers must answer.
 */
export const serviceHealthStep = Effect.gen(function* () {
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const connector = yield* DaemonConnector
  const socketPath = socketPathIn(paths.stateDir)

  const verify = Effect.fn("ServiceHealth.verify")(function* () {
    const manifest = yield* manifests
      .read()
      .pipe(
        Effect.mapError(() =>
          fail(`manifest ${manifests.path} is unreadable`, "Run: blctx doctor --step data_directory")
        )
      )
    if (Option.isNone(manifest) || manifest.value.state !== "active") {
      return yield* fail("blctx is not installed (no active manifest)", "Run: blctx install codex")
    }
    const id = manifest.value.installation_id
    const started = yield* Clock.currentTimeMillis
    const { identity, read } = yield* connector
      .withClient({ socketPath, timeout: HEALTH_TIMEOUT }, (client) =>
        Effect.gen(function* () {
          const identity = yield* client.ping()
          const read = yield* Effect.either(client.jobStatus(JobId.make(randomUUID())))
          return { identity, read }
        })
      )
      .pipe(
        Effect.timeoutFail({
          duration: HEALTH_TIMEOUT,
          onTimeout: () => fail(`no protocol round trip within ${Duration.format(HEALTH_TIMEOUT)}`, "Run: blctx doctor")
        }),
        Effect.mapError((e) => ("remediation" in e ? fail(e.message, e.remediation) : e))
      )
    const elapsed = (yield* Clock.currentTimeMillis) - started
    const doctor = "Run: blctx install codex --step background_service"
    if (identity.installation_id !== id) {
      return yield* fail(`the daemon serves installation ${identity.installation_id}, not ${id}`, doctor)
    }
    if (identity.db_path !== paths.database) {
      return yield* fail(`the daemon uses ${identity.db_path}, not ${paths.database}`, doctor)
    }
    if (identity.schema_version !== CURRENT_SCHEMA_VERSION) {
      return yield* fail(
        `the daemon's database has schema v${identity.schema_version}; this blctx expects v${CURRENT_SCHEMA_VERSION}`,
        "Run: blctx install codex"
      )
    }
    if (read._tag === "Left" && read.left._tag !== "JobNotFound") {
      return yield* fail(`the daemon could not read its database: ${read.left.message}`, "Run: blctx doctor")
    }
    return {
      detail: `round trip ${elapsed} ms: installation ${id}, schema v${identity.schema_version}, ${identity.db_path}, index ${identity.index_state}`
    }
  })

  return {
    id: "service_health",
    title: "Service health",
    requires: ["background_service"],
    install: () => verify(),
    verify: () => verify(),
    uninstall: () => Effect.succeed({ detail: "nothing to remove (health is a check)" })
  } satisfies Step
})
