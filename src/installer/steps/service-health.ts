import { randomUUID } from "node:crypto"
import { Clock, Duration, Effect, Either } from "effect"
import { JobId, type JobView } from "../../jobs/job.js"
import type { Manifest } from "../../ownership/manifest.js"
import { Paths } from "../../paths/paths.js"
import type { ContextStatusResponse } from "../../retrieval/context-status.js"
import type { BlctxClient } from "../../rpc/client.js"
import { CURRENT_SCHEMA_VERSION } from "../../store/migrations.js"
import { describeError, fail } from "../step.js"
import { daemonSession } from "./daemon-session.js"
import { activeInstallationManifest } from "./installation-manifest.js"
import { stepWithServices } from "./step-context.js"

/** Ping and a database read through the query workers must both finish within this. */
export const HEALTH_TIMEOUT = Duration.seconds(10)
/** The index's own status (a fresh judgement plus coverage, which stats every source) within this. */
export const INDEX_STATUS_TIMEOUT = Duration.seconds(10)
/** How many Pings doctor times. */
export const DOCTOR_PINGS = 5

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** What the index holds now, in one line: messages, sessions, chunks and their vectors. */
export const describeIndex = (s: ContextStatusResponse): string => {
  const c = s.coverage
  const embedded = c.chunks - c.vectors_pending
  const reason = s.query_mode_reason === null ? "" : ` (${s.query_mode_reason})`
  return `index: ${plural(c.messages, "message")} in ${plural(c.sessions, "session")}, ${plural(c.chunks, "chunk")} (vectors: ${embedded} ready, ${c.vectors_pending} pending); state ${s.index_state}, queries ${s.query_mode}${reason}`
}

/** The newest job of each kind, with its outcome (and error when it failed). */
export const describeJobs = (jobs: ReadonlyArray<JobView>): string => {
  const newest = new Map<string, JobView>()
  for (const job of jobs) if (!newest.has(job.kind)) newest.set(job.kind, job)
  if (newest.size === 0) return "no jobs yet"
  return [...newest.values()].map((j) => `${j.kind} ${j.state}${j.error === null ? "" : ` (${j.error})`}`).join(", ")
}

const activeManifest = activeInstallationManifest(
  (path) => `blctx is not installed (no active manifest at ${path}), so there is no daemon to check`
)

const TRIED = "connect, Ping, then a database read through the query workers"

/** Ping, then a read through the query workers (a job that does not exist), each timed. */
const roundTrip = (client: BlctxClient) =>
  Effect.gen(function* () {
    const t0 = yield* Clock.currentTimeMillis
    const identity = yield* client.Ping()
    const t1 = yield* Clock.currentTimeMillis
    const read = yield* Effect.either(client.JobStatus({ job_id: JobId.make(randomUUID()) }))
    const t2 = yield* Clock.currentTimeMillis
    return { identity, pingMs: t1 - t0, read, readMs: t2 - t1 }
  })

type RoundTrip = Effect.Effect.Success<ReturnType<typeof roundTrip>>

/** The daemon that answered serves this installation, its database, at the current schema. */
const checkIdentity = ({ identity }: RoundTrip, m: Manifest, socketPath: string) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const reinstall = "Run: blctx install codex --step background_service"
    if (identity.installation_id !== m.installation_id) {
      return yield* fail(
        `the daemon on ${socketPath} serves installation ${identity.installation_id}, not ${m.installation_id}`,
        reinstall
      )
    }
    if (identity.db_path !== paths.database) {
      return yield* fail(`the daemon uses ${identity.db_path}, not ${paths.database}`, reinstall)
    }
    if (identity.schema_version !== CURRENT_SCHEMA_VERSION) {
      return yield* fail(
        `the daemon's database has schema v${identity.schema_version}; this blctx expects v${CURRENT_SCHEMA_VERSION}`,
        "Run: blctx install codex"
      )
    }
  })

/** The read through the query workers answered (that the job is not found is an answer). */
const checkRead = ({ identity, read }: RoundTrip, logHint: string) =>
  Either.isLeft(read) && read.left._tag !== "JobNotFound"
    ? fail(
        `blctxd (pid ${identity.pid}) answered Ping but could not read its database through the query workers: ${describeError(read.left)}`,
        `Check the database: blctx status --step data_directory; ${logHint}.`,
        read.left._tag
      )
    : Effect.void

const verify = Effect.fn("ServiceHealth.verify")(function* () {
  const { socketPath, logHint, session } = yield* daemonSession
  const m = yield* activeManifest
  const trip = yield* session(m, TRIED, HEALTH_TIMEOUT, roundTrip)
  yield* checkIdentity(trip, m, socketPath)
  yield* checkRead(trip, logHint(m))
  // The index is judged now, not from Ping's periodically refreshed state.
  const index = yield* session(m, "ContextStatus", INDEX_STATUS_TIMEOUT, (client) => client.ContextStatus()).pipe(
    Effect.map(describeIndex),
    Effect.catchAll((f) => Effect.succeed(`index: not known (${f.detail})`))
  )
  const { identity, pingMs, readMs } = trip
  return {
    detail: `blctxd answered in ${pingMs} ms (pid ${identity.pid}, version ${identity.version}, schema v${identity.schema_version}, ${identity.db_path}); a read through the query workers took ${readMs} ms; ${index}`
  }
})

/** `DOCTOR_PINGS` timed Pings, then the newest jobs. */
const timedPings = (client: BlctxClient) =>
  Effect.gen(function* () {
    const latencies: Array<number> = []
    for (let i = 0; i < DOCTOR_PINGS; i++) {
      const t0 = yield* Clock.currentTimeMillis
      yield* client.Ping()
      latencies.push((yield* Clock.currentTimeMillis) - t0)
    }
    const status = yield* client.ContextStatus()
    return { latencies, jobs: status.recent_jobs }
  })

/** Doctor: several timed Pings (latency spread, not one sample) and the newest job of each kind. */
const diagnose = Effect.fn("ServiceHealth.diagnose")(function* () {
  const { session } = yield* daemonSession
  const m = yield* activeManifest
  const tried = `${DOCTOR_PINGS} Pings and ContextStatus`
  const { latencies, jobs } = yield* session(m, tried, INDEX_STATUS_TIMEOUT, timedPings)
  const sorted = [...latencies].sort((a, b) => a - b)
  const at = (i: number) => sorted[i] ?? 0
  return {
    detail: `${DOCTOR_PINGS} Pings: min ${at(0)} ms, median ${at(Math.floor(sorted.length / 2))} ms, max ${at(sorted.length - 1)} ms; newest jobs: ${describeJobs(jobs)}`
  }
})

/**
 * A bounded protocol round trip: Ping must name this installation, its database and the
 * current schema version, and a read through the query workers must answer. The detail says how
 * long it took, who answered and what the index holds now, judged at that moment (Ping's own
 * index_state is refreshed only every few seconds, so it can still say "empty" right after an
 * import). Every failure says what was tried, where, and what bound elapsed.
 */
export const serviceHealthStep = stepWithServices(
  { id: "service_health", title: "Service health", requires: ["background_service"] },
  {
    install: () => verify(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => Effect.succeed({ detail: "nothing to remove (health is a check)" })
  }
)
