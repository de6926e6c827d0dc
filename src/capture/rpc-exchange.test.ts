import * as Fs from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { requestLine, rpcExchange } from "./rpc-exchange.js"

let dir: string
let socketPath: string
let closeServer: (() => Promise<void>) | undefined
beforeEach(() => {
  dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "brx-"))
  socketPath = NodePath.join(dir, "d.sock")
})
afterEach(async () => {
  await closeServer?.()
  closeServer = undefined
  Fs.rmSync(dir, { recursive: true, force: true })
})

/** A server on `socketPath` that hands the first line it receives, and the connection, to `onRequest`. */
const listen = (onRequest: (line: string, socket: Net.Socket) => void): Promise<{ readonly lines: Array<string> }> =>
  new Promise((resolve, reject) => {
    const lines: Array<string> = []
    const sockets = new Set<Net.Socket>()
    const server = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => undefined)
      let buffer = ""
      socket.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        const newline = buffer.indexOf("\n")
        if (newline === -1 || lines.length > 0) return
        lines.push(buffer.slice(0, newline + 1))
        onRequest(buffer.slice(0, newline), socket)
      })
    })
    closeServer = () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      })
    server.once("error", reject)
    server.listen(socketPath, () => resolve({ lines }))
  })

const request = { tag: "Search", payload: { query: "deploy", limit: 2 } }
// Well below the test timeout, so a missed answer fails as a Timeout rather than hanging.
const generous = { deadlineMs: 10_000, maxLineChars: 1_048_576 }
const exit = (requestId: string, exit: unknown) => `${JSON.stringify({ _tag: "Exit", requestId, exit })}\n`
const success = (requestId: string, value: unknown) => exit(requestId, { _tag: "Success", value })

describe("rpcExchange", () => {
  it("sends one Request frame and picks the Exit with its id from among other lines", async () => {
    const server = await listen((_line, socket) =>
      socket.write(
        `{"_tag":"Pong"}\n${exit("99", { _tag: "Failure", cause: { _tag: "Die" } })}${success("2", { other: true })}` +
          success("1", { hits: [1, 2] })
      )
    )
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "Success", value: { hits: [1, 2] } })
    expect(server.lines).toEqual([requestLine(request)])
    expect(JSON.parse(server.lines[0] ?? "")).toEqual({
      _tag: "Request",
      id: "1",
      tag: "Search",
      payload: request.payload,
      headers: []
    })
  })

  it("reads an answer that arrives in pieces", async () => {
    await listen((_line, socket) => {
      for (const char of success("1", "ok")) socket.write(char)
    })
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "Success", value: "ok" })
  })

  it.each([
    ["a failed Exit for its id", exit("1", { _tag: "Failure", cause: { _tag: "Fail", error: "busy" } })],
    ["a Defect", `${JSON.stringify({ _tag: "Defect", defect: "boom" })}\n`],
    ["a ClientProtocolError", `${JSON.stringify({ _tag: "ClientProtocolError", error: "bad frame" })}\n`]
  ])("ends with an error answer on %s", async (_what, answer) => {
    await listen((_line, socket) => socket.write(answer))
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "ErrorAnswer" })
  })

  it("names the tag of the error a failed Exit carries, so a caller can tell a busy daemon", async () => {
    const busy = { _tag: "DaemonBusy", in_flight: 12, limit: 12, remediation: "Retry in a moment." }
    await listen((_line, socket) => socket.write(exit("1", { _tag: "Failure", cause: { _tag: "Fail", error: busy } })))
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "ErrorAnswer", errorTag: "DaemonBusy" })
  })

  it("ends with a malformed answer on a line that is not JSON", async () => {
    await listen((_line, socket) => socket.write(`{"_tag":"Pong"}\n{not json\n${success("1", "late")}`))
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "MalformedAnswer" })
  })

  it("ends with a malformed answer when an unfinished line outgrows the bound", async () => {
    await listen((_line, socket) => socket.write("x".repeat(65)))
    expect(await rpcExchange(socketPath, request, { deadlineMs: 10_000, maxLineChars: 64 })).toEqual({
      _tag: "MalformedAnswer"
    })
  })

  it("is unavailable without a socket, and when the server closes before the answer", async () => {
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "Unavailable" })
    await listen((_line, socket) => socket.end(`{"_tag":"Pong"}\n{"_tag":"Exit","requestId":"1"`))
    expect(await rpcExchange(socketPath, request, generous)).toEqual({ _tag: "Unavailable" })
  })

  it("times out when no answer comes by the deadline", async () => {
    await listen(() => undefined)
    expect(await rpcExchange(socketPath, request, { deadlineMs: 50, maxLineChars: 64 })).toEqual({ _tag: "Timeout" })
  })
})
