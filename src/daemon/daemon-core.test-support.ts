import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { RpcTest } from "@effect/rpc"
import { SqlClient } from "@effect/sql"
import { Deferred, Duration, Effect, Either, Layer, Option, Schema } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { NodeUiListenerLive } from "../../layers/node-ui-listener.js"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { InstallationId } from "../domain/installation-id.js"
import { EmbedError } from "../embedding/embedder.js"
import { EmbeddingUnavailable } from "../embedding/embedding-unavailable.js"
import type { JobId, JobView } from "../jobs/job.js"
import { makeRegistry, type RegisteredJobKind, registerJobKind } from "../jobs/job-kind.js"
import { JobKinds } from "../jobs/job-kinds.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"
import { HistoryReadsSql } from "../retrieval/history-reads-sql.js"
import { DaemonRpcs } from "../rpc/protocol.js"
import { QueryReadsInProcess } from "../rpc/query-handlers.js"
import type { QueryReads } from "../rpc/query-reads.js"
import { initializeDatabase } from "../store/identity.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { UiAssetFolder } from "../ui/server/ui-assets.js"
import { UiServer } from "../ui/server/ui-server.js"
import { wholeMessageChunking } from "../vectors/import-services.js"
import { makeDaemonCore } from "./daemon.js"
import { DaemonConfig } from "./daemon-config.js"
import { DaemonProcess } from "./daemon-process.js"
import { IndexingFactory } from "./indexing-factory.js"
import { DaemonHandlersLive } from "./rpc-handlers.js"

/**
 * Test support: the daemon's handlers in process, over the same core layers blctxd builds
 * (writer database, job runner with the real import and repair kinds, index judge and watcher,
 * the capture drain), with reads answered by `HistoryReadsSql` on a read-only connection instead
 * of worker threads.
 * No socket and no writer lock: the client is `RpcTest.makeClient`.
 */

export const TEST_INSTALLATION = InstallationId.make("7a2b3c4d-5e6f-4a70-8b9c-0d1e2f3a4b5c")

/** A job kind that runs until `release` is completed: a job that is surely running when cancelled. */
export const makeGateKind = (release: Deferred.Deferred<void>) =>
  registerJobKind({
    name: "gate",
    params: Schema.Struct({}),
    checkpoint: Schema.Null,
    run: () => Deferred.await(release).pipe(Effect.as({ state: "completed" as const }))
  })

/** No model installed: lexical search, whole-message chunks, vectors pending. */
const NoModelFactory = Layer.succeed(IndexingFactory, {
  make: () =>
    Effect.succeed({
      indexing: {
        current: Effect.succeed({ chunking: wholeMessageChunking, embedding: Option.none() }),
        unavailable: Effect.succeed(Option.some(EmbeddingUnavailable.NotInstalled({ detail: "no model in this test" })))
      },
      embeddedVectors: false
    })
})

/**
 * The deterministic fake model, verified, with sqlite-vec on the writer connection and
 * whole-message chunks. `failEmbeds` makes that many passage embeddings fail first (as a model
 * that errors now and then), counted in `embedCalls`.
 */
export const fakeModelFactory = (options: { readonly failEmbeds?: number } = {}) => {
  const embedCalls = { passages: 0, failed: 0 }
  const layer = Layer.succeed(IndexingFactory, {
    make: (writer) =>
      Effect.gen(function* () {
        const vectors = yield* Effect.orDie(makeSqliteVectorIndex(writer))
        const { embedder } = makeFakeEmbedder()
        const embed = (texts: ReadonlyArray<string>) =>
          Effect.suspend(() => {
            embedCalls.passages++
            if (embedCalls.failed < (options.failEmbeds ?? 0)) {
              embedCalls.failed++
              return Effect.fail(
                new EmbedError({ folder: "/models/fake", message: "the fake model failed on purpose" })
              )
            }
            return embedder.embed(texts, "passage")
          })
        return {
          indexing: {
            current: Effect.succeed({
              chunking: wholeMessageChunking,
              embedding: Option.some({
                fingerprint: embedder.fingerprint,
                embed,
                embedQuery: (text: string) =>
                  Effect.map(embedder.embed([text], "query"), (v) => v[0] ?? new Float32Array(embedder.dims)),
                vectors
              })
            }),
            unavailable: Effect.succeed(Option.none())
          },
          embeddedVectors: true
        }
      })
  })
  return { layer, embedCalls, fingerprint: makeFakeEmbedder().embedder.fingerprint }
}

/** A fresh home with a migrated database stamped for TEST_INSTALLATION, removed afterwards. */
const freshHome = Layer.scopedContext(
  Effect.gen(function* () {
    const home = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-daemon-core-")))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(home, { recursive: true, force: true })))
    const paths = yield* Paths.pipe(Effect.provide(Paths.layerFrom({ home })))
    for (const dir of [paths.dataDir, paths.stateDir]) Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    yield* Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: paths.database, readonly: false }))
        yield* initializeDatabase(paths.database, TEST_INSTALLATION).pipe(
          Effect.provideService(SqlClient.SqlClient, sql)
        )
      })
    )
    return yield* Layer.build(Paths.layerFrom({ home }))
  })
).pipe(Layer.provide(SqliteOpenerLive))

/**
 * Reads as the query workers answer them, on their own read-only connection; with
 * `vectorReads`, sqlite-vec is loaded into it as a worker does (hybrid searches), otherwise
 * a hybrid search answers lexically saying the vector index cannot be read.
 */
const inProcessReads = (vectorReads: boolean) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const { database } = yield* Paths
      const reader = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: true }))
      const vectors = vectorReads
        ? yield* Effect.either(makeSqliteVectorIndex(reader)).pipe(Effect.map(Either.mapLeft((e) => e.message)))
        : Either.left("no vector index in this test")
      return QueryReadsInProcess.pipe(
        Layer.provide(HistoryReadsSql({ database, vectors })),
        Layer.provide(Layer.succeed(SqlClient.SqlClient, reader))
      )
    })
  )

/** What a test may change in the in-process daemon: its indexing (default: no model) and extra job kinds. */
export interface InProcessOptions {
  readonly factory?: Layer.Layer<IndexingFactory>
  readonly kinds?: ReadonlyArray<RegisteredJobKind>
  /** Load sqlite-vec into the reader, as the query workers do (default: no vector reads). */
  readonly vectorReads?: boolean
  /** The daemon's process (default: one whose stop request does nothing). */
  readonly process?: Layer.Layer<DaemonProcess>
  /** The reads, in place of a read-only connection in process (as a query worker that never starts). */
  readonly reads?: Layer.Layer<QueryReads>
}

/** The in-process daemon's command line: only the installation id is read. */
export const TestDaemonConfig = Layer.succeed(DaemonConfig, {
  "installation-id": TEST_INSTALLATION,
  "data-home": "/unused",
  "config-home": "/unused",
  "cache-home": "/unused",
  "state-home": "/unused"
})

/** The in-process daemon's process: a stop request does nothing. */
export const TestDaemonProcess = Layer.succeed(DaemonProcess, {
  pid: 4242,
  node: "/usr/bin/node",
  argv: ["blctxd"],
  requestStop: Effect.void
})

/** The viewer's server as the daemon has it, on a real loopback listener, without a page to serve. */
export const InProcessUi = UiServer.Default.pipe(
  Layer.provide(
    Layer.mergeAll(
      NodeUiListenerLive,
      Layer.succeed(UiAssetFolder, NodePath.join(tmpdir(), "blctx-no-such-page")),
      NodeFileSystem.layer
    )
  )
)

/** The handlers' layer and everything under it, for `RpcTest.makeClient(DaemonRpcs)`. */
export const inProcessDaemon = (release: Deferred.Deferred<void>, options: InProcessOptions = {}) =>
  DaemonHandlersLive.pipe(
    Layer.provideMerge(InProcessUi),
    Layer.provideMerge(makeDaemonCore(options.reads ?? inProcessReads(options.vectorReads ?? false))),
    Layer.provide(
      Layer.mergeAll(
        options.factory ?? NoModelFactory,
        NodeTranscriptFilesLive,
        Layer.succeed(JobKinds, makeRegistry([makeGateKind(release), ...(options.kinds ?? [])])),
        TestDaemonConfig,
        options.process ?? TestDaemonProcess
      )
    ),
    Layer.provideMerge(ManifestStore.Default),
    Layer.provideMerge(freshHome),
    Layer.provideMerge(Layer.mergeAll(SqliteOpenerLive, NodeSafeFsLive))
  )

/** A client of the in-process daemon, for the life of the scope. */
export const inProcessClient = Effect.suspend(() => inProcessClientWith({}))

/** A client of an in-process daemon built with `options`, for the life of the scope. */
export const inProcessClientWith = (options: InProcessOptions) =>
  Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
    const context = yield* Layer.build(inProcessDaemon(release, options))
    const client = yield* RpcTest.makeClient(DaemonRpcs).pipe(Effect.provide(context))
    return { client, release, paths: yield* Paths.pipe(Effect.provide(context)) }
  })

/** Polls a job until it leaves queued/running (bounded at two minutes). */
export const jobFinished = (
  client: Effect.Effect.Success<typeof inProcessClient>["client"],
  id: JobId
): Effect.Effect<JobView, Error> =>
  Effect.gen(function* () {
    while (true) {
      const job = yield* client.JobStatus({ job_id: id })
      if (job.state !== "queued" && job.state !== "running") return job
      yield* Effect.sleep(Duration.millis(20))
    }
  }).pipe(
    Effect.mapError((e) => new Error(e.message)),
    Effect.timeoutFail({ duration: Duration.minutes(2), onTimeout: () => new Error(`job ${id} did not finish`) })
  )
