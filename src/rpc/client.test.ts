import { mkdtempSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Duplex } from "node:stream"
import * as Socket from "@effect/platform/Socket"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { connect, connectOver } from "./client.js"

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? (exit.cause._tag === "Fail" ? exit.cause.error : undefined) : undefined

describe("connect", () => {
  it.live("reports a missing daemon as DaemonUnavailable with a remediation, not a hang", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-client-"))
      const socketPath = NodePath.join(dir, "blctxd.sock")
      const exit = yield* Effect.scoped(
        Effect.flatMap(connect({ socketPath, timeout: "3 seconds" }), (c) => c.ping())
      ).pipe(Effect.exit)
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "DaemonUnavailable", socket: socketPath })
      expect(error?.reason).toContain("no socket")
      expect(error?.remediation).toContain("blctx install codex --step background_service")
      rmSync(dir, { recursive: true, force: true })
    })
  )

  it.live("bounds a call to a socket that accepts but never answers", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-client-"))
      const socketPath = NodePath.join(dir, "blctxd.sock")
      const connections: Array<Net.Socket> = []
      // Accepts and stays silent.
      const server = Net.createServer((connection) => connections.push(connection))
      yield* Effect.async<void>((resume) => {
        server.listen(socketPath, () => resume(Effect.void))
      })
      const exit = yield* Effect.scoped(
        Effect.flatMap(connect({ socketPath, timeout: "300 millis" }), (c) => c.ping())
      ).pipe(Effect.exit)
      expect(failureOf(exit)).toMatchObject({ _tag: "DaemonUnavailable", reason: "no answer within 300ms" })
      for (const connection of connections) connection.destroy()
      yield* Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
      rmSync(dir, { recursive: true, force: true })
    })
  )

  it.live("a connection whose writes fail (the daemon went away under it) is DaemonUnavailable, not a defect", () =>
    Effect.gen(function* () {
      // What a Unix socket does when its peer's listener closed after the connection was made:
      // connected, then every write fails with EPIPE.
      const gone = () =>
        new Duplex({
          read() {},
          write(_chunk, _encoding, callback) {
            callback(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }))
          }
        })
      const transport = Layer.effect(Socket.Socket, NodeSocket.fromDuplex(Effect.sync(gone)))
      const exit = yield* Effect.scoped(
        Effect.flatMap(connectOver(transport, { socketPath: "/run/blctxd.sock", timeout: "10 seconds" }), (c) =>
          c.ping()
        )
      ).pipe(Effect.exit)
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "DaemonUnavailable", socket: "/run/blctxd.sock", not_running: false })
      expect(error?.reason).toContain("the connection was lost")
      expect(error?.reason).toContain("EPIPE")
    })
  )
})
