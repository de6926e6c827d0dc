import { mkdtempSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { connect } from "./client.js"

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
})
