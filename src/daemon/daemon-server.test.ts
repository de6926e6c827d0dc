import * as Fs from "node:fs"
import * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Layer } from "effect"
import { NodeSocketBinderLive } from "../../layers/node-socket-binder.js"
import { Paths } from "../paths/paths.js"
import { connect } from "../rpc/client.js"
import { stoppingReason } from "../rpc/daemon-stopping.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { inProcessDaemon, TestDaemonConfig, TestDaemonProcess } from "./daemon-core.test-support.js"
import { DaemonServerLive } from "./daemon-server.js"
import { Readiness } from "./readiness.js"

// The protocol on a real Unix socket, spoken the way the hook speaks it: one raw NDJSON frame,
// no RPC client.

const NoReadiness = Layer.succeed(Readiness, { ready: () => Effect.void, stopping: Effect.void })

/** Sends `frame` and gathers lines until one is the request's Exit (bounded; the socket is closed after). */
const exchange = (socket: string, frame: string) =>
  Effect.async<Record<string, unknown>, Error>((resume) => {
    const connection = Net.createConnection(socket)
    let buffered = ""
    connection.setEncoding("utf8")
    connection.on("connect", () => connection.write(frame))
    connection.on("data", (chunk: string) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop() ?? ""
      for (const line of lines) {
        const message = JSON.parse(line) as Record<string, unknown>
        if (message._tag === "Exit") {
          connection.end()
          resume(Effect.succeed(message))
        }
      }
    })
    connection.on("error", (e) => resume(Effect.fail(e)))
    return Effect.sync(() => connection.destroy())
  }).pipe(
    Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error("no Exit frame from the daemon") })
  )

describe("the daemon's socket", () => {
  it.live("answers the hook's raw PromptRecall frame with a successful Exit", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
        const context = yield* Layer.build(
          DaemonServerLive.pipe(
            Layer.provideMerge(inProcessDaemon(release)),
            Layer.provide(Layer.mergeAll(NodeSocketBinderLive, NoReadiness, TestDaemonConfig, TestDaemonProcess))
          )
        )
        const paths = yield* Paths.pipe(Effect.provide(context))
        const frame = `${JSON.stringify({
          _tag: "Request",
          id: "1",
          tag: "PromptRecall",
          payload: { prompt: "fix the failing date test", limit: 3, floor: 0.5 },
          headers: []
        })}\n`
        const exit = yield* exchange(socketPathIn(paths.stateDir), frame)
        expect(exit).toMatchObject({
          _tag: "Exit",
          requestId: "1",
          exit: { _tag: "Success", value: { query_mode: "lexical", hits: [] } }
        })
      })
    )
  )

  it.live(
    "a Ping after the database was replaced: the socket is gone at once, the client reports blctxd stopping",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const release = yield* Deferred.make<void>()
          yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
          const context = yield* Layer.build(
            DaemonServerLive.pipe(
              Layer.provideMerge(inProcessDaemon(release)),
              Layer.provide(Layer.mergeAll(NodeSocketBinderLive, NoReadiness, TestDaemonConfig, TestDaemonProcess))
            )
          )
          const paths = yield* Paths.pipe(Effect.provide(context))
          const socketPath = socketPathIn(paths.stateDir)
          const client = yield* connect({ socketPath, timeout: "30 seconds" })
          yield* client.Ping()

          Fs.copyFileSync(paths.database, `${paths.database}.other`)
          Fs.renameSync(`${paths.database}.other`, paths.database)
          const refused = yield* Effect.flip(client.Ping())
          expect(refused).toMatchObject({ _tag: "DaemonUnavailable", not_running: false })
          expect(stoppingReason(refused)).toBe(
            `the database blctxd holds was replaced by another file at ${paths.database}; blctxd is stopping`
          )
          expect(Fs.existsSync(socketPath)).toBe(false)
        })
      )
  )
})
