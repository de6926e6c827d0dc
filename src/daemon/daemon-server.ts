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
 * Returns (with a reason) once this daemon is no longer wanted: its socket file was removed or
 * replaced (nobody can reach it), or its installation was uninstalled or is gone. A daemon
 * orphaned that way stops by itself instead of running on unseen. Transient read errors are
 * ignored; only a definite answer stops it.
 */
const noLongerWanted = (socket: string, socketIno: number) =>
  Effect.gen(function* () {
    const args = yield* DaemonConfig
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
    yield* Effect.addFinalizer(() =>
      fs.lstat(socket).pipe(
        // Only the socket just checked: anything swapped in since is left alone.
        Effect.flatMap((e) =>
          Option.isSome(e) && e.value.kind === "socket"
            ? removeVerified(socket, e.value).pipe(Effect.provideService(SafeFs, fs))
            : Effect.void
        ),
        Effect.ignore
      )
    )
    return yield* Effect.flatMap(SocketBinder, (binder) => binder.bind(socket)).pipe(
      Effect.mapError((e) => startupError(`cannot listen on ${e.path}: ${e.message}`, "Run: blctx doctor"))
    )
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
    const fs = yield* SafeFs
    const readiness = yield* Readiness
    const process = yield* DaemonProcess
    const args = yield* DaemonConfig
    const socket = socketPathIn(paths.stateDir)
    const bound = yield* fs.lstat(socket).pipe(Effect.orElseSucceed(() => Option.none()))
    const socketIno = Option.match(bound, { onNone: () => -1, onSome: (e) => e.ino })
    yield* readiness.ready(`serving ${socket}`)
    yield* Effect.addFinalizer(() => readiness.stopping)
    yield* Effect.logInfo("blctxd ready").pipe(
      Effect.annotateLogs({ socket, installation: args["installation-id"], pid: process.pid })
    )
    yield* Effect.addFinalizer(() => Effect.logInfo("blctxd stopping"))
    yield* noLongerWanted(socket, socketIno).pipe(
      Effect.flatMap((reason) =>
        Effect.logWarning("blctxd stopping by itself").pipe(
          Effect.annotateLogs({ reason }),
          Effect.zipRight(process.requestStop)
        )
      ),
      Effect.forkScoped
    )
  })
)

/** The protocol on the private socket, then readiness and the watchdog. Needs the handlers' services. */
export const DaemonServerLive = Serving.pipe(Layer.provide(ProtocolServer))
