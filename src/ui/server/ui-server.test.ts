import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { UiAssetFolder } from "./ui-assets.js"
import { UiListenError, UiListener } from "./ui-listener.js"
import { UiServer } from "./ui-server.js"

/** A listener that binds nothing: it records each start and whether its scope is still open. */
const fakeListener = (bound: number, refuse = false) => {
  const starts: Array<{ port: number; open: boolean }> = []
  const layer = Layer.succeed(UiListener, {
    listen: (port) =>
      refuse
        ? Effect.fail(new UiListenError({ port, message: "address already in use" }))
        : Effect.gen(function* () {
            const start = { port, open: true }
            starts.push(start)
            yield* Effect.addFinalizer(() =>
              Effect.sync(() => {
                start.open = false
              })
            )
            return port === 0 ? bound : port
          })
  })
  return { starts, layer }
}

const serverWith = (listener: Layer.Layer<UiListener>) =>
  UiServer.Default.pipe(
    Layer.provide(Layer.mergeAll(listener, Layer.succeed(UiAssetFolder, "/nonexistent"), NodeFileSystem.layer))
  )

/** The server, built in the test's scope (as the daemon builds it in its own). */
const buildServer = (listener: Layer.Layer<UiListener>) =>
  Effect.map(Layer.build(serverWith(listener)), (context) => Context.get(context, UiServer))

describe("the viewer's server", () => {
  it.scoped("starts one listener at the first open and reuses it; each open mints a new link", () =>
    Effect.gen(function* () {
      const fake = fakeListener(41000)
      const ui = yield* buildServer(fake.layer)
      const first = yield* ui.open({})
      const second = yield* ui.open({ port: 41000 })
      const third = yield* ui.open({ port: 0 })
      expect(fake.starts).toEqual([{ port: 0, open: true }])
      expect([first.port, second.port, third.port]).toEqual([41000, 41000, 41000])
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:41000\/open\?token=[A-Za-z0-9_-]{43}$/)
      expect(new Set([first.url, second.url, third.url]).size).toBe(3)
    })
  )

  it.scoped("refuses another port while it runs, naming the running page", () =>
    Effect.gen(function* () {
      const fake = fakeListener(41000)
      const ui = yield* buildServer(fake.layer)
      yield* ui.open({ port: 41001 })
      const refused = yield* Effect.flip(ui.open({ port: 41002 }))
      expect(refused).toMatchObject({ _tag: "UiAlreadyServing", url: "http://127.0.0.1:41001/", requested_port: 41002 })
      expect(refused.message).toContain("http://127.0.0.1:41001/")
    })
  )

  it.scoped("reports a port it cannot listen on, with what to do", () =>
    Effect.gen(function* () {
      const ui = yield* buildServer(fakeListener(0, true).layer)
      const refused = yield* Effect.flip(ui.open({ port: 8080 }))
      expect(refused).toMatchObject({ _tag: "UiListenFailed", port: 8080, reason: "address already in use" })
      expect(refused.remediation).toContain("--port")
    })
  )

  it.effect("closes the listener when the protocol's scope closes (the daemon stops), and starts none after", () =>
    Effect.gen(function* () {
      const fake = fakeListener(41000)
      const ui = yield* buildServer(fake.layer).pipe(Effect.provideService(Scope.Scope, yield* Scope.make()))
      const serving = yield* Scope.make()
      yield* ui.serveRpc(Effect.die("unused")).pipe(Scope.extend(serving))
      yield* ui.open({})
      expect(fake.starts).toEqual([{ port: 0, open: true }])
      yield* Scope.close(serving, Exit.void)
      expect(fake.starts).toEqual([{ port: 0, open: false }])
      expect(yield* Effect.flip(ui.open({}))).toMatchObject({
        _tag: "UiListenFailed",
        reason: "the daemon is stopping"
      })
    })
  )
})
