import { Duration, Effect, Layer } from "effect"
import { JobRunner } from "../jobs/job-runner.js"
import { JobStore } from "../jobs/job-store.js"
import type { Paths } from "../paths/paths.js"
import type { QueryReads } from "../rpc/query-reads.js"
import { DAEMON_STARTUP_LIMIT } from "../service/start-bounds.js"
import type { StoreError } from "../store/store-error.js"
import { UiRpcServedLive } from "../ui/server/ui-rpc-served.js"
import { UiServer } from "../ui/server/ui-server.js"
import { CaptureDrainLive } from "./capture-drain.js"
import { DaemonIndexingLive, DaemonJobKindsLive, type IndexingKindOptions } from "./daemon-indexing.js"
import { DaemonServerLive } from "./daemon-server.js"
import { HeldFilesLive } from "./held-files.js"
import { ImportRetryLive } from "./import-retry-loop.js"
import { IndexJudgeLive } from "./index-judge.js"
import { IndexWatcherLive } from "./index-watcher.js"
import { RedactionUpgradeLive } from "./redaction-upgrade.js"
import { DaemonHandlersLive } from "./rpc-handlers.js"
import { startupError, WriterLockHeld } from "./startup-checks.js"
import { WriterDatabaseLive } from "./writer-database.js"

/**
 * Logs `step` once its layer is built: a startup that runs out of time leaves in the log the
 * steps it finished, so the one that hung is the next.
 */
const startupStep =
  (step: string) =>
  <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) =>
    Layer.tap(layer, () => Effect.logInfo("startup step done").pipe(Effect.annotateLogs({ step })))

/**
 * Builds `layer` within the startup bound: a step that hangs (a lock, a worker, a socket) makes
 * the daemon exit with a startup error instead of never becoming ready.
 */
export const withinStartupLimit = <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) =>
  Layer.scopedContext(
    Effect.flatMap(Effect.scope, (scope) =>
      Layer.buildWithScope(layer, scope).pipe(
        Effect.timeoutFail({
          duration: DAEMON_STARTUP_LIMIT,
          onTimeout: () =>
            startupError(
              `startup did not finish within ${Duration.format(DAEMON_STARTUP_LIMIT)}`,
              "Check the log above for the step that hung; run blctx doctor."
            )
        })
      )
    )
  )

/**
 * Everything the daemon's handlers use, on the writer database and `reads`: the indexing
 * services and job kinds on the writer connection, the job runner (which replays interrupted
 * jobs) and the start-time check that queues redacting stored text again, the index judge and its
 * watcher, capture (the spool's drain and the reconciliation of captured transcripts), and the
 * retry of skipped imports. The database and the readers start together.
 */
export const makeDaemonCore = <E, RIn>(reads: Layer.Layer<QueryReads, E, RIn>, kinds: IndexingKindOptions = {}) => {
  const storage = Layer.merge(
    WriterDatabaseLive.pipe(startupStep("writer database open")),
    reads.pipe(startupStep("query workers started"))
  ).pipe(Layer.provideMerge(HeldFilesLive))
  const indexing = DaemonIndexingLive.pipe(Layer.provideMerge(storage), startupStep("indexing services built"))
  const jobs = JobRunner.Default.pipe(Layer.provide(JobStore.Default), Layer.provideMerge(DaemonJobKindsLive(kinds)))
  const core = RedactionUpgradeLive.pipe(
    Layer.provideMerge(jobs.pipe(Layer.provideMerge(indexing))),
    startupStep("job runner started")
  )
  const watched = IndexWatcherLive.pipe(Layer.provideMerge(IndexJudgeLive), Layer.provideMerge(core))
  return Layer.merge(CaptureDrainLive, ImportRetryLive).pipe(
    Layer.provideMerge(watched),
    startupStep("index judge and capture started")
  )
}

/**
 * blctxd as layers, in the order they start: the installation check and the writer lock; the
 * core (`makeDaemonCore`), with `reads` (the query workers); the viewer's server (idle until the
 * first `OpenUi`); the handlers, also served to the viewer's page over HTTP; and last the protocol
 * on the private socket, which reports ready. All within the startup bound; everything opened is
 * closed in reverse when the daemon stops.
 */
export const makeDaemonLive = <RIn>(
  reads: Layer.Layer<QueryReads, StoreError, RIn | Paths>,
  kinds: IndexingKindOptions = {}
) => {
  const readers = reads.pipe(Layer.mapError((e) => startupError(`query workers: ${e.message}`, "Run: blctx doctor")))
  return withinStartupLimit(
    DaemonServerLive.pipe(
      Layer.provide(UiRpcServedLive),
      Layer.provide(DaemonHandlersLive),
      Layer.provide(UiServer.Default),
      Layer.provide(makeDaemonCore(readers, kinds)),
      Layer.provide(WriterLockHeld)
    )
  )
}
