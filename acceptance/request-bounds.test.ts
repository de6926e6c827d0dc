import * as Net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, type DaemonHome, isAlive, makeDaemonHome, scaled } from "./support/daemon-harness.js"

let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

const FIFTEEN_MB = 15 * 1024 * 1024

/**
 * Connects to the daemon's socket and writes one request line of about `bytes` (a Search whose
 * query is that long), then waits until the connection is closed. `cutOff` says the daemon closed
 * it before the whole line was written. Resolves with what happened; never rejects.
 */
const sendHugeLine = (socketPath: string, bytes: number) =>
  new Promise<{ readonly closedBy: "daemon" | "timeout"; readonly cutOff: boolean }>((resolve) => {
    const socket = Net.createConnection(socketPath)
    let ended = false
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ closedBy: "timeout", cutOff: !ended })
    }, scaled(90_000))
    // EPIPE or ECONNRESET when the daemon drops the connection mid-line.
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ closedBy: "daemon", cutOff: !ended })
    })
    // Anything the daemon answers is read and dropped; the daemon decides when the connection ends.
    socket.on("data", () => undefined)
    socket.on("connect", () => {
      const head = '{"_tag":"Request","id":"1","tag":"Search","payload":{"query":"'
      const tail = '"},"headers":[]}\n'
      const piece = "x".repeat(1024 * 1024)
      let written = head.length
      socket.write(head)
      const pump = () => {
        while (written < bytes) {
          if (socket.destroyed) return
          written += piece.length
          if (!socket.write(piece)) return void socket.once("drain", pump)
        }
        ended = true
        socket.end(tail)
      }
      pump()
    })
  })

describe("request payloads are bounded", () => {
  it("four concurrent 15 MB request lines do not stall the daemon: service_health still passes", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const pids = h.daemonPids()
    expect(pids.length).toBeGreaterThan(0)

    const outcomes = await Promise.all(Array.from({ length: 4 }, () => sendHugeLine(h.socketPath, FIFTEEN_MB)))
    // The daemon ends each oversized connection itself rather than reading the line to its end.
    expect(outcomes).toEqual(Array.from({ length: 4 }, () => ({ closedBy: "daemon", cutOff: true })))

    expect(pids.every(isAlive)).toBe(true)
    const status = await h.blctx(["status", "--step", "service_health", "--json"])
    expect(status.code, status.stdout + status.stderr).toBe(0)
    expect(checkOf(status.stdout, "service_health").status, status.stdout).toBe("passed")
  })
})
