import { FileSystem, type HttpApp } from "@effect/platform"
import { DateTime, Effect, ExecutionStrategy, Exit, Option, Ref, Scope } from "effect"
import { OpenUiResponse, UiAlreadyServing, UiListenFailed } from "../../rpc/open-ui-contract.js"
import { loadUiAssets, UiAssetFolder } from "./ui-assets.js"
import { pageOrigin } from "./ui-checks.js"
import { makeUiHttpApp } from "./ui-http-app.js"
import { UiListener } from "./ui-listener.js"
import { UiSessions } from "./ui-sessions.js"

type RpcApp = HttpApp.Default<never, Scope.Scope>

/**
 * The viewer, served by the daemon itself: the first `open` starts the HTTP listener on
 * 127.0.0.1 for the rest of the daemon's life (the port asked for, or one the system chooses);
 * every `open` mints a new one-time link. The protocol's app is handed in by `serveRpc` once the
 * daemon's handlers exist (they answer `OpenUi`, so they are built after this service), and
 * leaving that scope closes the listener: the daemon's stop closes it before its handlers go.
 */
export class UiServer extends Effect.Service<UiServer>()("blctx/UiServer", {
  scoped: Effect.gen(function* () {
    const listener = yield* UiListener
    const sessions = yield* UiSessions
    const folder = yield* UiAssetFolder
    const fs = yield* FileSystem.FileSystem
    const daemonScope = yield* Effect.scope
    const rpc = yield* Ref.make(Option.none<RpcApp>())
    const running = yield* Ref.make(Option.none<{ readonly port: number; readonly scope: Scope.CloseableScope }>())
    /** Set when the daemon stops: no listener starts again while its handlers go. */
    const stopped = yield* Ref.make(false)
    const starting = yield* Effect.makeSemaphore(1)

    /** Binds the listener in a scope of its own, closed by `serveRpc`'s owner or the daemon's stop. */
    const start = (requested: number) =>
      Effect.gen(function* () {
        const scope = yield* Scope.fork(daemonScope, ExecutionStrategy.sequential)
        const assets = yield* loadUiAssets(folder).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        // The port is known only once bound; the app reads it from here for its Host checks.
        let bound = requested
        const app = Effect.suspend(() =>
          makeUiHttpApp({ port: bound, daemonPid: process.pid, assets, rpc: Ref.get(rpc) }).pipe(
            Effect.provideService(UiSessions, sessions)
          )
        )
        const port = yield* listener.listen(requested, app).pipe(
          Scope.extend(scope),
          Effect.tapError(() => Scope.close(scope, Exit.void)),
          Effect.mapError(
            (e) =>
              new UiListenFailed({
                port: requested,
                reason: e.message,
                remediation: "Choose another port with --port, or leave it out to let the system choose one."
              })
          )
        )
        bound = port
        yield* Effect.logInfo("the viewer listens").pipe(Effect.annotateLogs({ url: pageOrigin(port) }))
        return { port, scope }
      })

    /** The running listener's port, started first when there is none. */
    const ensureListening = (requested: number | undefined) =>
      starting.withPermits(1)(
        Effect.gen(function* () {
          const current = yield* Ref.get(running)
          if (Option.isSome(current)) {
            const port = current.value.port
            if (requested !== undefined && requested !== 0 && requested !== port) {
              return yield* new UiAlreadyServing({
                url: `${pageOrigin(port)}/`,
                port,
                requested_port: requested,
                remediation: `Run blctx ui without --port (or with --port ${port}) to reuse it; it stops when the daemon stops.`
              })
            }
            return port
          }
          if (yield* Ref.get(stopped)) {
            return yield* new UiListenFailed({
              port: requested ?? 0,
              reason: "the daemon is stopping",
              remediation: "Run blctx ui again: it starts the daemon anew."
            })
          }
          const started = yield* start(requested ?? 0)
          yield* Ref.set(running, Option.some(started))
          return started.port
        })
      )

    /** `OpenUi`: the listener (started when needed) and a new one-time link to it. */
    const open = Effect.fn("UiServer.open")(function* (request: { readonly port?: number | undefined }) {
      const port = yield* ensureListening(request.port)
      const link = yield* sessions.mintLink()
      return new OpenUiResponse({
        url: `${pageOrigin(port)}/open?token=${link.token}`,
        port,
        expires_at: DateTime.formatIso(DateTime.unsafeMake(link.expiresAt))
      })
    })

    /** Closes the listener (and its connections) for good. */
    const close = Ref.set(stopped, true).pipe(
      Effect.zipRight(Ref.getAndSet(running, Option.none())),
      Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: (r) => Scope.close(r.scope, Exit.void) }))
    )

    /** Hands the protocol's app in for the life of the caller's scope; the listener closes with it. */
    const serveRpc = Effect.fn("UiServer.serveRpc")(function* (app: RpcApp) {
      yield* Ref.set(rpc, Option.some(app))
      yield* Effect.addFinalizer(() =>
        starting
          .withPermits(1)(close)
          .pipe(Effect.zipRight(Ref.set(rpc, Option.none())))
      )
    })

    return { open, serveRpc } as const
  }),
  dependencies: [UiSessions.Default]
}) {}
