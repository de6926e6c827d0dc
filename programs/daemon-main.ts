import * as Os from "node:os"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Duration, Effect, Either, Layer, Logger } from "effect"
import { IndexingFactoryLive } from "../layers/indexing-factory-live.js"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { NodeSocketBinderLive } from "../layers/node-socket-binder.js"
import { NodeTranscriptFilesLive } from "../layers/node-transcript-files.js"
import { NodeUiListenerLive } from "../layers/node-ui-listener.js"
import { QueryWorkerPoolLive } from "../layers/query-worker-pool.js"
import { SqliteOpenerLive } from "../layers/sqlite-opener-live.js"
import { SqliteWriterLockLive } from "../layers/sqlite-writer-lock.js"
import { SystemdNotifyReadinessLive } from "../layers/systemd-notify-readiness.js"
import { makeDaemonLive } from "../src/daemon/daemon.js"
import { DaemonConfig } from "../src/daemon/daemon-config.js"
import type { IndexingKindOptions } from "../src/daemon/daemon-indexing.js"
import { DaemonProcess } from "../src/daemon/daemon-process.js"
import { makeRegistry, type RegisteredJobKind } from "../src/jobs/job-kind.js"
import { JobKinds } from "../src/jobs/job-kinds.js"
import { ManifestStore } from "../src/ownership/manifest-store.js"
import { Paths } from "../src/paths/paths.js"
import type { DaemonArgs } from "../src/service/daemon-args.js"
import { parseDaemonArgv } from "../src/service/daemon-args.js"
import { SHUTDOWN_LIMIT } from "../src/service/start-bounds.js"
import { UiAssetFolder } from "../src/ui/server/ui-assets.js"
import { PACKAGE_UI_FOLDER } from "./package-files.js"

export interface DaemonProgram {
  /** The job kinds blctxd runs besides the indexing ones (import, repair), given its arguments. */
  readonly kinds: (args: DaemonArgs) => ReadonlyArray<RegisteredJobKind>
  /** How the indexing kinds are built (tests compose holds); nothing in the product. */
  readonly indexing?: (args: DaemonArgs) => IndexingKindOptions
  /** The folder the viewer's page is served from (tests give their own); the package's dist/ui. */
  readonly uiFolder?: (args: DaemonArgs) => string
}

/**
 * blctxd's program: decodes the command line, composes the live layers and launches the daemon.
 * `programs/blctxd.ts` (bundled as `dist/programs/daemon.js`) runs it with the production kinds;
 * tests compose their own.
 */
export const runDaemonProgram = (program: DaemonProgram) => {
  // Everything blctxd creates (socket, pidfile, lock and database files) is 0600 from birth.
  process.umask(0o177)

  const argv = process.argv.slice(2)
  const parsed = parseDaemonArgv(argv)
  if (Either.isLeft(parsed)) {
    process.stderr.write(
      `${JSON.stringify({ level: "ERROR", message: "blctxd: invalid arguments", reason: parsed.left, usage: "blctxd --installation-id UUID --data-home DIR --config-home DIR --cache-home DIR --state-home DIR" })}\n`
    )
    process.exit(2)
  }
  const args = parsed.right

  // Graceful shutdown is bounded: if finalizers have not finished in time, exit anyway. The
  // running job's uncommitted step is lost and replayed from its checkpoint at the next start.
  const boundShutdown = () => {
    setTimeout(() => {
      process.stderr.write(`${JSON.stringify({ level: "ERROR", message: "shutdown exceeded its bound; exiting" })}\n`)
      process.exit(1)
    }, Duration.toMillis(SHUTDOWN_LIMIT)).unref()
  }
  process.once("SIGTERM", boundShutdown)
  process.once("SIGINT", boundShutdown)

  const PathsLive = Paths.layerFrom({
    home: process.env.HOME?.startsWith("/") ? process.env.HOME : Os.homedir(),
    XDG_DATA_HOME: args["data-home"],
    XDG_CONFIG_HOME: args["config-home"],
    XDG_CACHE_HOME: args["cache-home"],
    XDG_STATE_HOME: args["state-home"]
  })

  const MainLive = Layer.mergeAll(
    ManifestStore.Default,
    SqliteOpenerLive,
    SqliteWriterLockLive,
    NodeSocketBinderLive,
    NodeUiListenerLive,
    Layer.succeed(UiAssetFolder, program.uiFolder?.(args) ?? PACKAGE_UI_FOLDER),
    SystemdNotifyReadinessLive,
    IndexingFactoryLive.pipe(Layer.provide(ManifestStore.Default)),
    NodeTranscriptFilesLive,
    Layer.succeed(JobKinds, makeRegistry(program.kinds(args))),
    Layer.succeed(DaemonConfig, args),
    Layer.succeed(DaemonProcess, {
      pid: process.pid,
      node: process.execPath,
      argv: process.argv,
      // The same graceful path as `systemctl stop`: the runtime interrupts the daemon on SIGTERM.
      requestStop: Effect.sync(() => process.kill(process.pid, "SIGTERM"))
    })
  ).pipe(
    Layer.provideMerge(PathsLive),
    Layer.provideMerge(NodeSafeFsLive),
    Layer.provideMerge(NodeContext.layer),
    // Structured lines on stderr: journald (or the supervisor's log file) keeps them.
    Layer.provideMerge(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.jsonLogger)))
  )

  Layer.launch(makeDaemonLive(QueryWorkerPoolLive, program.indexing?.(args))).pipe(
    Effect.tapErrorTag("DaemonStartupError", (e) =>
      Effect.logError("blctxd refused to start").pipe(
        Effect.annotateLogs({ reason: e.reason, remediation: e.remediation })
      )
    ),
    Effect.provide(MainLive),
    NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
  )
}
