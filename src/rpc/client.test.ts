import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Duplex } from "node:stream"
import * as Socket from "@effect/platform/Socket"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer } from "effect"
import { connect, connectOver } from "./client.js"

const failureOf = <A, E>(exit: Exit.Exit<A, E>): Readonly<Record<string, unknown>> | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail"
    ? (exit.cause.error as Readonly<Record<string, unknown>>)
    : undefined

/** A Unix socket in a fresh directory whose connections `onConnection` gets; closed with the scope. */
const listening = (onConnection: (connection: Net.Socket) => void) =>
  Effect.acquireRelease(
    Effect.async<{ readonly dir: string; readonly socketPath: string; readonly server: Net.Server }>((resume) => {
      const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-client-"))
      const socketPath = NodePath.join(dir, "blctxd.sock")
      const connections: Array<Net.Socket> = []
      const server = Net.createServer((connection) => {
        connections.push(connection)
        onConnection(connection)
      })
      server.on("close", () => {
        for (const c of connections) c.destroy()
      })
      server.listen(socketPath, () => resume(Effect.succeed({ dir, socketPath, server })))
    }),
    ({ dir, server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.emit("close")
      }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  )

/** Answers every request line with a DaemonBusy failure, as the daemon's admission control does. */
const alwaysBusy = (connection: Net.Socket) => {
  let buffer = ""
  connection.setEncoding("utf8")
  connection.on("data", (chunk: string) => {
    buffer += chunk
    for (let i = buffer.indexOf("\n"); i !== -1; i = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, i)) as { readonly _tag: string; readonly id?: string }
      buffer = buffer.slice(i + 1)
      if (message._tag !== "Request") continue
      const error = { _tag: "DaemonBusy", in_flight: 32, limit: 32, remediation: "Retry in a moment." }
      const exit = { _tag: "Failure", cause: { _tag: "Fail", error } }
      connection.write(`${JSON.stringify({ _tag: "Exit", requestId: message.id, exit })}\n`)
    }
  })
}

describe("connect", () => {
  it.live("reports a missing daemon as DaemonUnavailable with a remediation, not a hang", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(NodePath.join(tmpdir(), "blctx-client-"))
      const socketPath = NodePath.join(dir, "blctxd.sock")
      const exit = yield* Effect.scoped(
        Effect.flatMap(connect({ socketPath, timeout: "3 seconds" }), (c) => c.Ping())
      ).pipe(Effect.exit)
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "DaemonUnavailable", socket: socketPath })
      expect(error?.reason).toContain("no socket")
      expect(error?.remediation).toContain("blctx install codex --step background_service")
      rmSync(dir, { recursive: true, force: true })
    })
  )

  it.live("a daemon that accepts but never answers fails at the deadline, naming its PID and the remedy", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { dir, socketPath } = yield* listening(() => {})
        writeFileSync(NodePath.join(dir, "blctxd.pid"), "4242\n")
        const client = yield* connect({ socketPath, timeout: "400 millis" })
        const [elapsed, exit] = yield* Effect.timed(Effect.exit(client.Search({ query: "anything" })))
        const error = failureOf(exit)
        expect(error).toMatchObject({ _tag: "DaemonUnavailable", not_answering: true, not_running: false })
        expect(error?.reason).toBe("blctxd (pid 4242) is not answering: it may be stopped or overloaded")
        expect(error?.remediation).toContain("kill -CONT 4242")
        expect(error?.remediation).toContain("kill -9 4242")
        expect(error?.remediation).toContain("blctx ping")
        expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(390)
        expect(Duration.toMillis(elapsed)).toBeLessThan(2_000)
      })
    )
  )

  it.live("a busy daemon is asked again within the deadline, and reported busy (not unavailable) when it passes", () =>
    Effect.scoped(
      Effect.gen(function* () {
        let requests = 0
        const { socketPath } = yield* listening((connection) => {
          connection.on("data", () => {
            requests++
          })
          alwaysBusy(connection)
        })
        const client = yield* connect({ socketPath, timeout: "600 millis" })
        const [elapsed, exit] = yield* Effect.timed(Effect.exit(client.Search({ query: "anything" })))
        expect(failureOf(exit)).toMatchObject({ _tag: "DaemonBusy", limit: 32 })
        expect(requests).toBeGreaterThan(1)
        expect(Duration.toMillis(elapsed)).toBeLessThan(2_000)
      })
    )
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
        Effect.flatMap(connect({ socketPath, timeout: "300 millis" }), (c) => c.Ping())
      ).pipe(Effect.exit)
      expect(failureOf(exit)).toMatchObject({ _tag: "DaemonUnavailable", not_answering: true })
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
          c.Ping()
        )
      ).pipe(Effect.exit)
      const error = failureOf(exit)
      expect(error).toMatchObject({ _tag: "DaemonUnavailable", socket: "/run/blctxd.sock", not_running: false })
      expect(error?.reason).toContain("the connection was lost")
      expect(error?.reason).toContain("EPIPE")
    })
  )
})
