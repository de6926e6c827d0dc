import * as NodePath from "node:path"
import { Duration, Effect, Either, Option, Schema } from "effect"
import { SafeFs } from "../../fs/safe-fs.js"
import { JobId, type JobView } from "../../jobs/job.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import type { BlctxClient } from "../../rpc/client.js"
import { DaemonConnector } from "../../rpc/daemon-connector.js"
import { DaemonUnavailable } from "../../rpc/errors.js"
import { socketPathIn } from "../../rpc/socket-location.js"
import { decodeDiscoverySnapshot, discoverySnapshotPath } from "../../transcripts/discovery-snapshot.js"
import { describeError, fail, type StepProgress, type StepRun } from "../step.js"
import { stepWithServices } from "./step-context.js"

/** The import job history_index submitted, so status and doctor can check it without rerunning. */
const HistoryIndexRecord = Schema.Struct({
  version: Schema.Literal(1),
  job_id: JobId,
  paths: Schema.Array(Schema.String)
})
const decodeRecord = Schema.decodeUnknownEither(Schema.parseJson(HistoryIndexRecord))
const encodeRecord = Schema.encodeSync(HistoryIndexRecord)

export const HISTORY_INDEX_FILE = "history-index.json"
/** A home with no session yet is set up, not broken: there is simply nothing to import. */
export const NOTHING_TO_INDEX = "nothing to index yet: session_discovery found no sessions"
const CALL_TIMEOUT = Duration.seconds(10)
const WAIT_LIMIT = Duration.minutes(10)
const POLL = Duration.millis(250)

const finished = (job: JobView) => !["queued", "running"].includes(job.state)

const describeJob = (job: JobView) => {
  const c = job.counts
  const n = (k: string) => c[k] ?? 0
  return `import job ${job.id} ${job.state}: ${n("files_imported") + n("files_appended")} files indexed, ${n("files_unchanged")} unchanged, ${n("messages_added")} messages added`
}

const recordPathOf = Effect.map(Paths, (paths) => NodePath.join(paths.stateDir, HISTORY_INDEX_FILE))

const daemonFailure = (e: Error & { readonly _tag: string }) =>
  fail(
    e.message.trim() === "" ? describeError(e) : e.message,
    "remediation" in e ? String(e.remediation) : "Check the daemon: blctx status --step service_health",
    e._tag
  )

/** One bounded call to this installation's daemon; its failure said as a step failure. */
const withClient = <A, E extends Error & { readonly _tag: string }>(
  use: (client: BlctxClient) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const connector = yield* DaemonConnector
    return yield* connector
      .withClient({ socketPath: socketPathIn(paths.stateDir), timeout: CALL_TIMEOUT }, use)
      .pipe(Effect.mapError(daemonFailure))
  })

const readSnapshot = Effect.gen(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const path = discoverySnapshotPath(paths.stateDir)
  const text = yield* fs
    .readText(path)
    .pipe(
      Effect.mapError(() => fail(`no session snapshot at ${path}`, "Run: blctx install codex --step session_discovery"))
    )
  const decoded = decodeDiscoverySnapshot(text)
  if (Either.isLeft(decoded)) {
    return yield* fail(`session snapshot ${path} is unreadable`, "Run: blctx install codex --step session_discovery")
  }
  return decoded.right
})

/** The recorded import, none when no import was recorded; an unreadable record fails. */
const readRecord = Effect.gen(function* () {
  const fs = yield* SafeFs
  const recordPath = yield* recordPathOf
  const text = yield* fs.readText(recordPath).pipe(Effect.option)
  if (Option.isNone(text)) return Option.none<typeof HistoryIndexRecord.Type>()
  const record = decodeRecord(text.value)
  if (Either.isLeft(record)) {
    return yield* fail(`${recordPath} is unreadable`, "Run: blctx install codex --step history_index")
  }
  return Option.some(record.right)
})

/**
 * No import recorded: install submits none while session_discovery found no session, so an empty
 * snapshot is a pass (a first session is indexed by the next install, or by the hooks); sessions
 * found but never imported are a failure.
 */
const unimported = Effect.gen(function* () {
  const snapshot = yield* readSnapshot
  if (snapshot.newest.length === 0) return { detail: NOTHING_TO_INDEX }
  return yield* fail(
    `no history import has been run, though session_discovery found ${snapshot.total} session files`,
    "Run: blctx install codex --step history_index"
  )
})

const follow = (jobId: JobId, progress: (p: StepProgress) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    while (true) {
      const job = yield* withClient((client) => client.JobStatus({ job_id: jobId }))
      const total = job.progress_total ?? 0
      yield* progress({
        label: `${job.progress_done}/${total} sessions`,
        ...(total > 0 ? { fraction: job.progress_done / total } : {})
      })
      if (finished(job)) return job
      yield* Effect.sleep(POLL)
    }
  }).pipe(
    Effect.timeoutFail({
      duration: WAIT_LIMIT,
      onTimeout: () =>
        fail(
          `import job ${jobId} is still running after ${Duration.format(WAIT_LIMIT)}; it continues in the daemon`,
          `Follow it with: blctx index-status ${jobId}`
        )
    })
  )

const outcome = (job: JobView) =>
  job.state === "completed" || job.state === "partial"
    ? Effect.succeed({ detail: describeJob(job) })
    : Effect.fail(
        fail(
          `${describeJob(job)}${job.error === null ? "" : ` (${job.error})`}`,
          "Run: blctx install codex --step history_index (check the daemon log if it fails again)"
        )
      )

/** Records the submitted job (owned by the installation), so status and doctor can follow it. */
const writeRecord = (jobId: JobId, newest: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const manifests = yield* ManifestStore
    const recordPath = yield* recordPathOf
    yield* fs
      .writeAtomic(recordPath, `${JSON.stringify(encodeRecord({ version: 1, job_id: jobId, paths: newest }))}\n`, 0o600)
      .pipe(Effect.mapError((e) => fail(`could not write ${e.path}: ${e.code}`, "Check the state directory.")))
    yield* manifests
      .recordOwned([recordPath])
      .pipe(
        Effect.mapError((e) =>
          fail(
            `could not record ${recordPath} as owned in ${manifests.path}: ${describeError(e)}`,
            "Check the manifest: blctx status --step data_directory",
            e._tag
          )
        )
      )
  })

const install = (run: StepRun) =>
  Effect.gen(function* () {
    const snapshot = yield* readSnapshot
    const newest = snapshot.newest.map((f) => f.path)
    if (newest.length === 0) return { detail: NOTHING_TO_INDEX }
    const submitted = yield* withClient((client) =>
      client.SubmitJob({ kind: "import", params: { paths: newest, origin: "history_index" } })
    )
    yield* writeRecord(submitted.job.id, newest)
    const job = yield* follow(submitted.job.id, run.progress)
    return yield* outcome(job)
  })

const verify = Effect.gen(function* () {
  const record = yield* readRecord
  if (Option.isNone(record)) return yield* unimported
  if (record.value.paths.length === 0) return { detail: NOTHING_TO_INDEX }
  const job = yield* withClient((client) => client.JobStatus({ job_id: record.value.job_id }))
  if (!finished(job)) return { detail: `${describeJob(job)} (${job.progress_done}/${job.progress_total ?? 0})` }
  return yield* outcome(job)
})

/**
 * Doctor: the recorded import job's outcome with the records it could not use (unclassified
 * records, unreadable lines, unreadable, missing or conflicting files), and what the index
 * says about its sources now (partial imports, conflicts, sources changed or gone since).
 */
const diagnose = Effect.gen(function* () {
  const record = yield* readRecord
  if (Option.isNone(record)) return { detail: `nothing deeper to check: no import recorded at ${yield* recordPathOf}` }
  if (record.value.paths.length === 0) return { detail: "nothing deeper to check: there were no sessions to import" }
  const { job, status } = yield* withClient((client) =>
    Effect.all({ job: client.JobStatus({ job_id: record.value.job_id }), status: client.ContextStatus() })
  )
  const n = (k: string) => job.counts[k] ?? 0
  const c = status.coverage
  const detail = [
    `import job ${job.id} ${job.state}${job.error === null ? "" : ` (${job.error})`}`,
    `${n("records")} records read: ${n("unclassified")} unclassified, ${n("parse_errors")} unreadable lines`,
    `files: ${n("files_unreadable")} unreadable, ${n("files_missing")} missing, ${n("files_conflict")} in conflict`,
    `index now: ${c.files.partial} partial and ${c.files.conflict} conflicting sources, ${c.sources_changed} changed and ${c.sources_missing} missing since import${c.sources_unreadable > 0 ? `, ${c.sources_unreadable} unreadable` : ""}`
  ].join("; ")
  const examples = c.partial_imports
    .slice(0, 3)
    .map((p) => `${p.path} (${p.unclassified} unclassified, ${p.parse_errors} unreadable lines)`)
  return { detail: examples.length === 0 ? detail : `${detail}; partial: ${examples.join(", ")}` }
})

/** Cancels queued or running imports; the indexed history stays (or goes with the database on --purge). */
const uninstall = (run: StepRun) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const connector = yield* DaemonConnector
    // With --purge, data_directory (which runs after this step) removes the database the history lives in.
    const history = run.purge
      ? `the indexed history goes with ${paths.database}, which data_directory removes (--purge)`
      : `indexed history kept in ${paths.database}`
    return yield* connector
      .withClient({ socketPath: socketPathIn(paths.stateDir), timeout: CALL_TIMEOUT }, (client) =>
        client.CancelJobs({ kind: "import" })
      )
      .pipe(
        Effect.map((r) => ({ detail: `cancelled ${r.cancelled.length} queued or running imports; ${history}` })),
        // With the daemon already gone there is nothing left to cancel; any other failure is said as it is.
        Effect.catchAll((e) =>
          e instanceof DaemonUnavailable && e.not_running
            ? Effect.succeed({ detail: `no daemon running: no import to cancel; ${history}` })
            : Effect.fail(
                fail(
                  `could not cancel queued or running imports: ${e.message}`,
                  "They stop with the daemon; run the uninstall again to make sure none is left: blctx uninstall codex",
                  e._tag
                )
              )
        )
      )
  })

/**
 * Sends the newest sessions that session_discovery recorded to the daemon as one import job,
 * newest first, and follows it with a progress bar. Reruns are cheap: unchanged files are
 * skipped by their checkpoints. Uninstall cancels queued or running imports; indexed data stays.
 */
export const historyIndexStep = stepWithServices(
  { id: "history_index", title: "History index", requires: ["background_service", "session_discovery"] },
  { install, verify: () => verify, diagnose: () => diagnose, uninstall }
)
