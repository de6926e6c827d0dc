import { SocketServer } from "@effect/platform"
import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Duration, Effect, Layer, Option } from "effect"
import { removeVerified } from "../fs/remove-verified.js"
import { SafeFs } from "../fs/safe-fs.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import { Paths } from "../paths/paths.js"
import { DaemonRpcs } from "../rpc/protocol.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { DaemonConfig } from "./daemon-config.js"
import { DaemonProcess } from "./daemon-process.js"
import { type FileIdentity, HeldFiles } from "./held-files.js"
import { Readiness } from "./readiness.js"
import { SocketBinder } from "./socket-binder.js"
import { prepareSocketPath } from "./socket-file.js"
import { startupError } from "./startup-checks.js"

/**
 * The longest request line (NDJSON message) the daemon reads, in characters. A query needs a few
 * KiB; an import job's paths (every session a history_index submits) take the most, about 10,000
 * paths per MiB. A connection whose unterminated line grows past this is closed at once
 * (@effect/rpc's BufferSizeExceeded), so a huge or endless line cannot tie up the daemon.
 */
export const MAX_REQUEST_CHARS = 4 * 1024 * 1024

/** How often the daemon checks that it is still wanted. */
export const WATCHDOG_INTERVAL = Duration.seconds(2)

/**
 * Returns (with a reason) once this daemon is no longer wanted: a file it holds (its socket, its
 * database, its pidfile) was removed or replaced (`HeldFiles`: that stops it by itself), or its
 * installation was uninstalled or is gone. A daemon orphaned that way stops instead of running on
 * unseen. Transient read errors are ignored; only a definite answer stops it.
 */
const noLongerWanted = Effect.gen(function* () {
  const args = yield* DaemonConfig
  const manifests = yield* ManifestStore
  const held = yield* HeldFiles
  while (true) {
    yield* Effect.sleep(WATCHDOG_INTERVAL)
    const files = yield* Effect.either(held.check)
    if (files._tag === "Left") return Option.none<string>()
    const manifest = yield* Effect.either(manifests.read())
    if (manifest._tag === "Right") {
      if (Option.isNone(manifest.right)) return Option.some(`manifest ${manifests.path} was removed`)
      const m = manifest.right.value
      if (m.state !== "active") return Option.some(`installation ${m.installation_id} was uninstalled`)
      if (m.installation_id !== args["installation-id"])
        return Option.some(`the manifest now names ${m.installation_id}`)
    }
  }
})

/** The private socket: a stale one left by a dead daemon is replaced, and it is removed again at shutdown. */
const ListeningSocket = Layer.scoped(
  SocketServer.SocketServer,
  Effect.gen(function* () {
    const paths = yield* Paths
    const fs = yield* SafeFs
    const socket = socketPathIn(paths.stateDir)
    if ((yield* prepareSocketPath(socket)) === "replaced-stale") {
      yield* Effect.logWarning("replaced a stale socket left by a previous daemon").pipe(
        Effect.annotateLogs({ socket })
      )
    }
    // Registered before binding, so it runs after the server has closed: no socket file remains.
    // Only the socket this daemon bound: a successor's, bound since this one was replaced, stays.
    let bound = Option.none<FileIdentity>()
    yield* Effect.addFinalizer(() =>
      fs.lstat(socket).pipe(
        Effect.flatMap((e) =>
          Option.isSome(e) &&
          e.value.kind === "socket" &&
          Option.exists(bound, (b) => b.dev === e.value.dev && b.ino === e.value.ino)
            ? removeVerified(socket, e.value).pipe(Effect.provideService(SafeFs, fs))
            : Effect.void
        ),
        Effect.ignore
      )
    )
    const server = yield* Effect.flatMap(SocketBinder, (binder) => binder.bind(socket)).pipe(
      Effect.mapError((e) => startupError(`cannot listen on ${e.path}: ${e.message}`, "Run: blctx doctor"))
    )
    bound = yield* fs.lstat(socket).pipe(Effect.orElseSucceed(() => Option.none()))
    yield* Effect.flatMap(HeldFiles, (held) => held.hold("socket", socket, { removeOnStop: true }))
    return server
  })
)

/** Serves the daemon's protocol on the socket: NDJSON with a bounded line length. */
const ProtocolServer = RpcServer.layer(DaemonRpcs).pipe(
  Layer.provide(RpcServer.layerProtocolSocketServer),
  Layer.provide(RpcSerialization.layerNdjsonWith({ maxBufferSize: MAX_REQUEST_CHARS })),
  Layer.provide(ListeningSocket)
)

/**
 * Once the protocol is served: tells the service manager the daemon is ready, and watches that
 * it is still wanted, stopping it (as a SIGTERM would) when it is not.
 */
const Serving = Layer.scopedDiscard(
  Effect.gen(function* () {
    const paths = yield* Paths
    const readiness = yield* Readiness
    const process = yield* DaemonProcess
    const args = yield* DaemonConfig
    const socket = socketPathIn(paths.stateDir)
    yield* readiness.ready(`serving ${socket}`)
    yield* Effect.addFinalizer(() => readiness.stopping)
    yield* Effect.logInfo("blctxd ready").pipe(
      Effect.annotateLogs({ socket, installation: args["installation-id"], pid: process.pid })
    )
    yield* Effect.addFinalizer(() => Effect.logInfo("blctxd stopping"))
    yield* noLongerWanted.pipe(
      // None: a held file changed, and HeldFiles already asked the daemon to stop.
      Effect.flatMap(
        Option.match({
          onNone: () => Effect.void,
          onSome: (reason) =>
            Effect.logWarning("blctxd stopping by itself").pipe(
              Effect.annotateLogs({ reason }),
              Effect.zipRight(process.requestStop)
            )
        })
      ),
      Effect.forkScoped
    )
  })
)

/** The protocol on the private socket, then readiness and the watchdog. Needs the handlers' services. */
export const DaemonServerLive = Serving.pipe(Layer.provide(ProtocolServer))
