import { SocketServer } from "@effect/platform"
import { RpcSerialization, RpcServer } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Context, DateTime, Duration, Effect, Either, Fiber, Layer, Option, Ref, Scope } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { makeImportKind } from "../importer/import-kind.js"
import { IndexingServices } from "../importer/import-services.js"
import { makeRepairKind } from "../importer/repair-kind.js"
import type { JobKindRegistry } from "../jobs/job-kind.js"
import { JobKinds } from "../jobs/job-kinds.js"
import { JobRunner } from "../jobs/job-runner.js"
import { JobStore } from "../jobs/job-store.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"
import type { QueryMode } from "../retrieval/contract.js"
import type { IndexState } from "../rpc/history-protocol.js"
import { DaemonIdentity, DaemonRpcs } from "../rpc/protocol.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { readIdentity } from "../store/identity.js"
import { CURRENT_SCHEMA_VERSION } from "../store/migrations.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { TranscriptFiles } from "../transcripts/transcript-files.js"
import { VERSION } from "../version.js"
import type { DaemonArgs } from "./daemon-args.js"
import { DaemonStartupError } from "./daemon-errors.js"
import { lockFileIn, pidFileIn } from "./daemon-files.js"
import { DaemonProcess } from "./daemon-process.js"
import { makeHistoryHandlers } from "./history-handlers.js"
import { IndexingFactory } from "./indexing-factory.js"
import { QueryPool } from "./job-queries.js"
import { Readiness } from "./readiness.js"
import { makeRpcHandlers } from "./rpc-handlers.js"
import { SocketBinder } from "./socket-binder.js"
import { prepareSocketPath } from "./socket-file.js"
import { WriterLock } from "./writer-lock.js"

/** Startup (checks, lock, database, workers, socket) must finish within this, or blctxd exits. */
export const STARTUP_LIMIT = Duration.seconds(10)
/** Graceful shutdown bound: the running job stops at its last checkpoint; the rest is replayed. */
export const SHUTDOWN_LIMIT = Duration.seconds(5)

/**
 * The longest request line (NDJSON message) the daemon reads, in characters. A query needs a few
 * KiB; an import job's paths (every session a history_index submits) take the most, about 10,000
 * paths per MiB. A connection whose unterminated line grows past this is closed at once
 * (@effect/rpc's BufferSizeExceeded), so a huge or endless line cannot tie up the daemon.
 */
export const MAX_REQUEST_CHARS = 4 * 1024 * 1024

const startupError = (reason: string, remediation: string) => new DaemonStartupError({ reason, remediation })

/** Reads the PID recorded by the lock holder, if any (used to name it in a refusal). */
export const readPidFile = (path: string) =>
  Effect.flatMap(SafeFs, (fs) => fs.readText(path)).pipe(
    Effect.map((text) => {
      const pid = Number.parseInt(text.trim(), 10)
      return Number.isSafeInteger(pid) && pid > 0 ? Option.some(pid) : Option.none<number>()
    }),
    Effect.orElseSucceed(() => Option.none<number>())
  )

const checkManifest = (args: DaemonArgs) =>
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const manifest = yield* manifests
      .read()
      .pipe(
        Effect.mapError((e) =>
          startupError(`manifest ${e.path} cannot be read (${e._tag})`, "Run: blctx doctor --step data_directory")
        )
      )
    if (Option.isNone(manifest)) {
      return yield* startupError(`no blctx manifest at ${manifests.path}`, "Run: blctx install codex")
    }
    const m = manifest.value
    if (m.installation_id !== args["installation-id"]) {
      return yield* startupError(
        `the manifest names installation ${m.installation_id}, but blctxd was started for ${args["installation-id"]}`,
        "Reinstall the service so it matches: blctx install codex --step background_service"
      )
    }
    if (m.state !== "active") {
      return yield* startupError(
        `installation ${m.installation_id} is inactive (uninstalled); blctxd serves only an active installation`,
        "Run: blctx install codex"
      )
    }
    return m
  })

/**
 * blctxd: verifies the installation, takes the writer lock, opens the database, replays
 * interrupted jobs, starts the query workers and serves the protocol on the private socket.
 * Reports ready only once the socket is bound. Runs until interrupted (SIGTERM/SIGINT).
 */
export const runDaemon = (args: DaemonArgs) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const started = yield* startDaemon(args, scope).pipe(
      Effect.timeoutFail({
        duration: STARTUP_LIMIT,
        onTimeout: () =>
          startupError(
            `startup did not finish within ${Duration.format(STARTUP_LIMIT)}`,
            "Check the log above for the step that hung; run blctx doctor."
          )
      })
    )
    yield* Effect.logInfo("blctxd ready").pipe(
      Effect.annotateLogs({ socket: started.socket, installation: args["installation-id"], pid: started.pid })
    )
    yield* Effect.addFinalizer(() => Effect.logInfo("blctxd stopping"))
    const reason = yield* watchdog(args, started.socket, started.socketIno)
    yield* Effect.logWarning("blctxd stopping by itself").pipe(Effect.annotateLogs({ reason }))
  })

/** How often the daemon re-judges its index (for Ping) and looks for vectors to repair. */
export const INDEX_WATCH_INTERVAL = Duration.seconds(2)

/**
 * Keeps Ping's index_state/query_mode current, and queues a repair when a verified model is
 * loaded while chunks lack its vectors (the model was installed after they were imported, or
 * changed): the embedding_model step passing is enough for pending vectors to be embedded.
 */
const watchIndex = (
  judge: ReturnType<typeof makeHistoryHandlers>["judge"],
  verdict: Ref.Ref<{ readonly index_state: IndexState; readonly query_mode: QueryMode }>,
  runner: JobRunner,
  kinds: JobKindRegistry
) =>
  Effect.gen(function* () {
    let repairedFor = -1
    while (true) {
      const judged = yield* Effect.either(judge)
      if (judged._tag === "Right") {
        const { verdict: v, services, status } = judged.right
        yield* Ref.set(verdict, { index_state: v.index_state, query_mode: v.query_mode })
        const busy = status.active_kinds.includes("repair") || status.active_kinds.includes("import")
        const pending = status.chunks_without_vector
        if (Option.isSome(services.embedding) && pending > 0 && !busy && pending !== repairedFor) {
          const repair = kinds.get("repair")
          const params = repair?.validate({})
          if (repair !== undefined && params !== undefined && Either.isRight(params)) {
            yield* runner.submit(repair.name, params.right, true).pipe(
              Effect.tap(() => Effect.logInfo("repair queued").pipe(Effect.annotateLogs({ pending }))),
              Effect.ignore
            )
            repairedFor = pending
          }
        }
      }
      yield* Effect.sleep(INDEX_WATCH_INTERVAL)
    }
  })

/** How often the daemon checks that it is still wanted. */
export const WATCHDOG_INTERVAL = Duration.seconds(2)

/**
 * Returns (with a reason) once this daemon is no longer wanted: its socket file was removed or
 * replaced (nobody can reach it), or its installation was uninstalled or is gone. A daemon
 * orphaned that way stops by itself instead of running on unseen. Transient read errors are
 * ignored; only a definite answer stops it.
 */
const watchdog = (args: DaemonArgs, socket: string, socketIno: number) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const manifests = yield* ManifestStore
    while (true) {
      yield* Effect.sleep(WATCHDOG_INTERVAL)
      const entry = yield* Effect.either(fs.lstat(socket))
      if (entry._tag === "Right") {
        if (Option.isNone(entry.right)) return `socket ${socket} was removed`
        if (entry.right.value.ino !== socketIno) return `socket ${socket} was replaced`
      }
      const manifest = yield* Effect.either(manifests.read())
      if (manifest._tag === "Right") {
        if (Option.isNone(manifest.right)) return `manifest ${manifests.path} was removed`
        const m = manifest.right.value
        if (m.state !== "active") return `installation ${m.installation_id} was uninstalled`
        if (m.installation_id !== args["installation-id"]) return `the manifest now names ${m.installation_id}`
      }
    }
  })

const startDaemon = (args: DaemonArgs, scope: Scope.Scope) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const fs = yield* SafeFs
    const lock = yield* WriterLock
    const opener = yield* SqliteOpener
    const pool = yield* QueryPool
    const binder = yield* SocketBinder
    const readiness = yield* Readiness
    const kinds = yield* JobKinds
    const process = yield* DaemonProcess
    const factory = yield* IndexingFactory
    const transcripts = yield* TranscriptFiles

    yield* checkManifest(args)

    const lockFile = lockFileIn(paths.dataDir)
    const pidFile = pidFileIn(paths.stateDir)
    yield* lock.acquire(lockFile).pipe(
      Effect.catchTags({
        WriterLockHeld: () =>
          Effect.flatMap(readPidFile(pidFile), (holder) =>
            Effect.fail(
              startupError(
                `another blctxd (PID ${Option.match(holder, { onNone: () => "unknown", onSome: String })}) holds the writer lock on ${paths.dataDir}`,
                "Only one daemon may serve a data directory; use the running one, or stop it first (blctx uninstall codex)."
              )
            )
          ),
        WriterLockError: (e) =>
          Effect.fail(
            startupError(`cannot take the writer lock ${e.lockFile}: ${e.message}`, "Check the data directory.")
          )
      })
    )
    yield* Effect.logInfo("writer lock held").pipe(Effect.annotateLogs({ lock: lockFile }))
    // Worker threads take a while to load; they start now, while the database is checked.
    const startingWorkers = yield* pool.open(paths.database).pipe(
      Effect.mapError((e) => startupError(`query workers: ${e.message}`, "Run: blctx doctor")),
      Scope.extend(scope),
      Effect.forkIn(scope)
    )

    const sql = yield* opener
      .open({ filename: paths.database, readonly: false })
      .pipe(
        Effect.mapError((e) =>
          startupError(`cannot open ${e.path}: ${e.message}`, "Run: blctx doctor --step data_directory")
        )
      )
    const identity = yield* readIdentity(paths.database).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.mapError((e) => startupError(`${e.path}: ${e.message}`, "Run: blctx doctor --step data_directory"))
    )
    if (identity.schemaVersion !== CURRENT_SCHEMA_VERSION) {
      return yield* startupError(
        `${paths.database} has schema version ${identity.schemaVersion}; this blctxd needs ${CURRENT_SCHEMA_VERSION}`,
        "Run: blctx install codex (it migrates the database)"
      )
    }
    if (Option.getOrNull(identity.installationId) !== args["installation-id"]) {
      return yield* startupError(
        `${paths.database} belongs to installation ${Option.getOrElse(identity.installationId, () => "none")}, not ${args["installation-id"]}`,
        "Run: blctx doctor --step data_directory"
      )
    }

    const pidText = `${process.pid}\n`
    yield* fs
      .writeAtomic(pidFile, pidText, 0o600)
      .pipe(Effect.mapError((e) => startupError(`cannot write ${pidFile}: ${e.code}`, "Check the state directory.")))
    yield* Effect.addFinalizer(() =>
      fs.readText(pidFile).pipe(
        Effect.flatMap((text) => (text === pidText ? fs.removeFile(pidFile) : Effect.void)),
        Effect.ignore
      )
    )

    // Indexing kinds are built on the writer connection: chunks and their vectors commit together.
    const { indexing, embeddedVectors } = yield* factory.make(sql)
    const indexingKinds = yield* Effect.all([makeImportKind, makeRepairKind]).pipe(
      Effect.provideService(IndexingServices, indexing),
      Effect.provideService(TranscriptFiles, transcripts),
      Effect.provideService(SafeFs, fs)
    )
    const allKinds: JobKindRegistry = new Map([...kinds, ...indexingKinds.map((k) => [k.name, k] as const)])

    const runner = yield* Layer.buildWithScope(
      JobRunner.Default.pipe(
        Layer.provide(JobStore.Default),
        Layer.provide(Layer.succeed(SqlClient.SqlClient, sql)),
        Layer.provide(Layer.succeed(JobKinds, allKinds)),
        Layer.provide(Layer.succeed(Paths, paths))
      ),
      scope
    ).pipe(Effect.map((context) => Context.get(context, JobRunner)))

    const queries = yield* Fiber.join(startingWorkers)

    const socket = socketPathIn(paths.stateDir)
    const previous = yield* prepareSocketPath(socket)
    if (previous === "replaced-stale") {
      yield* Effect.logWarning("replaced a stale socket left by a previous daemon").pipe(
        Effect.annotateLogs({ socket })
      )
    }
    // Registered before binding, so it runs after the server has closed: no socket file remains.
    yield* Effect.addFinalizer(() =>
      fs.lstat(socket).pipe(
        Effect.flatMap((e) => (Option.isSome(e) && e.value.kind === "socket" ? fs.removeFile(socket) : Effect.void)),
        Effect.ignore
      )
    )
    const server = yield* binder
      .bind(socket)
      .pipe(Effect.mapError((e) => startupError(`cannot listen on ${e.path}: ${e.message}`, "Run: blctx doctor")))

    const startedAt = DateTime.formatIso(yield* DateTime.now)
    const history = makeHistoryHandlers({ queries, indexing, embeddedVectors })
    const verdict = yield* Ref.make<{ readonly index_state: IndexState; readonly query_mode: QueryMode }>({
      index_state: "empty",
      query_mode: "lexical"
    })
    yield* watchIndex(history.judge, verdict, runner, allKinds).pipe(Effect.forkIn(scope))
    const baseIdentity = {
      installation_id: args["installation-id"],
      pid: process.pid,
      node: process.node,
      argv: [...process.argv],
      version: VERSION,
      db_path: paths.database,
      schema_version: identity.schemaVersion,
      started_at: startedAt
    }
    const daemonIdentity = Effect.map(Ref.get(verdict), (v) => new DaemonIdentity({ ...baseIdentity, ...v }))
    yield* Layer.buildWithScope(
      RpcServer.layer(DaemonRpcs).pipe(
        Layer.provide(
          makeRpcHandlers({ identity: daemonIdentity, runner, kinds: allKinds, queries, history: history.handlers })
        ),
        Layer.provide(RpcServer.layerProtocolSocketServer),
        Layer.provide(RpcSerialization.layerNdjsonWith({ maxBufferSize: MAX_REQUEST_CHARS })),
        Layer.provide(Layer.succeed(SocketServer.SocketServer, server))
      ),
      scope
    )
    const bound = yield* fs.lstat(socket).pipe(Effect.orElseSucceed(() => Option.none()))
    const socketIno = Option.match(bound, { onNone: () => -1, onSome: (e) => e.ino })
    yield* readiness.ready(`serving ${socket}`)
    yield* Effect.addFinalizer(() => readiness.stopping)
    return { socket, socketIno, pid: process.pid }
  })
