import type { Rpc, RpcGroup } from "@effect/rpc"
import { DateTime, Effect, Either, Layer } from "effect"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import { DAEMON_STOPPING_REMEDIATION, DaemonStopping } from "../rpc/daemon-stopping.js"
import { daemonStoreError, InvalidJobParams, JobNotFound, UnknownJobKind } from "../rpc/errors.js"
import { ForwardedReads } from "../rpc/history-protocol.js"
import { DaemonIdentity, DaemonRpcs, SubmittedJob } from "../rpc/protocol.js"
import { QueryReads } from "../rpc/query-reads.js"
import { UiServer } from "../ui/server/ui-server.js"
import { VERSION } from "../version.js"
import { AdmissionLive } from "./admission.js"
import { DaemonConfig } from "./daemon-config.js"
import { DaemonProcess } from "./daemon-process.js"
import { makeExportHandlers } from "./export-handlers.js"
import { makeForgetHandlers } from "./forget-handlers.js"
import { HeldFiles } from "./held-files.js"
import { makeHistoryHandlers } from "./history-handlers.js"
import { LatestIndexSummary } from "./index-watcher.js"
import { makeNotesHandlers } from "./notes-handlers.js"
import { WriterDatabase } from "./writer-database.js"

/** Who answers Ping: this process, its installation and database, and the index as last judged. */
const makeIdentity = Effect.gen(function* () {
  const args = yield* DaemonConfig
  const process = yield* DaemonProcess
  const database = yield* WriterDatabase
  const summary = yield* LatestIndexSummary
  const startedAt = DateTime.formatIso(yield* DateTime.now)
  const fixed = {
    installation_id: args["installation-id"],
    pid: process.pid,
    node: process.node,
    argv: [...process.argv],
    version: VERSION,
    db_path: database.path,
    schema_version: database.schemaVersion,
    started_at: startedAt
  }
  return Effect.map(summary.get, (s) => new DaemonIdentity({ ...fixed, ...s }))
})

type ForwardedRead = RpcGroup.Rpcs<typeof ForwardedReads>

/** A forwarded read's handler: the same procedure, sent to a query worker. */
type Forwarded = {
  readonly [R in ForwardedRead as R["_tag"]]: (payload: Rpc.Payload<R>) => Effect.Effect<Rpc.Success<R>, Rpc.Error<R>>
}

/** The forwarded reads, each answered by a query worker as it came: derived from the group, no line per read. */
const forwarded = (reads: QueryReads["Type"]): Forwarded => {
  const calls = reads as unknown as Record<string, (payload: unknown) => Effect.Effect<unknown, unknown>>
  const forward = (tag: string) => (payload: unknown) => calls[tag]?.(payload) ?? Effect.die(tag)
  // The same procedures on both sides, so the types are Forwarded's by construction.
  return Object.fromEntries(
    [...ForwardedReads.requests.keys()].map((tag) => [tag, forward(tag)])
  ) as unknown as Forwarded
}

/**
 * The daemon's answers: jobs go to the job runner, reads to `HistoryReads` (the query workers),
 * authored updates to the writer connection (`notes-handlers.ts`); admission control in front
 * (`admission.ts`). `OpenUi` starts the viewer's listener (`src/ui/server`).
 */
const Handlers = DaemonRpcs.toLayer(
  Effect.gen(function* () {
    const runner = yield* JobRunner
    const kinds = yield* JobKinds
    const reads = yield* QueryReads
    const held = yield* HeldFiles
    const identity = yield* makeIdentity
    const history = yield* makeHistoryHandlers
    const notes = yield* makeNotesHandlers
    const forget = yield* makeForgetHandlers
    const exports = yield* makeExportHandlers
    const ui = yield* UiServer
    return {
      ...forwarded(reads),
      ...history,
      ...notes,
      ...forget,
      ...exports,
      // A health answer never vouches for a database no longer at its path: the daemon stops.
      Ping: () =>
        held.check.pipe(
          Effect.mapError(
            (e) => new DaemonStopping({ path: e.path, reason: e.reason, remediation: DAEMON_STOPPING_REMEDIATION })
          ),
          Effect.zipRight(identity)
        ),
      OpenUi: (request) => ui.open(request),
      SubmitJob: (request) =>
        Effect.gen(function* () {
          const kind = kinds.get(request.kind)
          if (kind === undefined) return yield* new UnknownJobKind({ kind: request.kind, known: [...kinds.keys()] })
          const params = kind.validate(request.params)
          if (Either.isLeft(params)) return yield* new InvalidJobParams({ kind: request.kind, reason: params.left })
          const result = yield* runner
            .submit(kind.name, params.right, request.supersede)
            .pipe(Effect.mapError(daemonStoreError))
          yield* Effect.logInfo("job submitted").pipe(Effect.annotateLogs({ job: result.job.id, kind: kind.name }))
          return new SubmittedJob(result)
        }),
      JobStatus: (request) =>
        reads
          .ReadJob({ job_id: request.job_id })
          .pipe(
            Effect.flatMap((job) =>
              job === null ? Effect.fail(new JobNotFound({ job_id: request.job_id })) : Effect.succeed(job)
            )
          ),
      CancelJobs: (request) =>
        runner
          .cancel({
            ...(request.job_ids === undefined ? {} : { jobIds: request.job_ids }),
            ...(request.kind === undefined ? {} : { kind: request.kind })
          })
          .pipe(
            Effect.mapError(daemonStoreError),
            Effect.map((cancelled) => ({ cancelled }))
          )
    }
  })
)

export const DaemonHandlersLive = Layer.merge(Handlers, AdmissionLive)

export type DaemonHandlersRequirements = Layer.Layer.Context<typeof DaemonHandlersLive>
