import { Effect, Either, Option } from "effect"
import type { JobKindRegistry } from "../jobs/job-kind.js"
import type { JobRunner } from "../jobs/job-runner.js"
import { daemonStoreError, InvalidJobParams, JobNotFound, UnknownJobKind } from "../rpc/errors.js"
import { type DaemonIdentity, DaemonRpcs, SubmittedJob } from "../rpc/protocol.js"
import type { makeHistoryHandlers } from "./history-handlers.js"
import type { JobQueries } from "./job-queries.js"

/** The daemon's answers: writes go to the job runner, reads to the query workers. */
export const makeRpcHandlers = (deps: {
  readonly identity: Effect.Effect<DaemonIdentity>
  readonly runner: JobRunner
  readonly kinds: JobKindRegistry
  readonly queries: JobQueries
  readonly history: ReturnType<typeof makeHistoryHandlers>["handlers"]
}) =>
  DaemonRpcs.toLayer({
    ...deps.history,
    Ping: () => deps.identity,
    SubmitJob: (request) =>
      Effect.gen(function* () {
        const kind = deps.kinds.get(request.kind)
        if (kind === undefined) return yield* new UnknownJobKind({ kind: request.kind, known: [...deps.kinds.keys()] })
        const params = kind.validate(request.params)
        if (Either.isLeft(params)) return yield* new InvalidJobParams({ kind: request.kind, reason: params.left })
        const result = yield* deps.runner
          .submit(kind.name, params.right, request.supersede)
          .pipe(Effect.mapError(daemonStoreError))
        yield* Effect.logInfo("job submitted").pipe(Effect.annotateLogs({ job: result.job.id, kind: kind.name }))
        return new SubmittedJob(result)
      }),
    JobStatus: (request) =>
      deps.queries.job(request.job_id).pipe(
        Effect.mapError(daemonStoreError),
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new JobNotFound({ job_id: request.job_id })),
            onSome: Effect.succeed
          })
        )
      ),
    CancelJobs: (request) =>
      deps.runner
        .cancel({
          ...(request.job_ids === undefined ? {} : { jobIds: request.job_ids }),
          ...(request.kind === undefined ? {} : { kind: request.kind })
        })
        .pipe(
          Effect.mapError(daemonStoreError),
          Effect.map((cancelled) => ({ cancelled }))
        )
  })
