import { PassThrough, type Readable, Writable } from "node:stream"
import { describe, expect, it } from "vitest"
import type { HandshakeTable } from "./handshake.js"
import { MAX_FRONT_LINE_BYTES, MAX_HELD_BYTES, startFront } from "./mcp-front.js"

const table: HandshakeTable = {
  supportedVersions: ["2025-06-18"],
  latestVersion: "2025-06-18",
  initialize: { capabilities: { tools: {} }, serverInfo: { name: "blctx", version: "1" } },
  toolsList: { tools: [{ name: "search" }] }
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } }
})
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
const LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
const CALL = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search"}}'

/** A client's stdin and stdout around a front; `written` is every line that reached the client. */
const session = (frontTable: HandshakeTable | undefined) => {
  const input = new PassThrough()
  const written: Array<string> = []
  const output = new Writable({
    decodeStrings: false,
    write: (chunk, _encoding, callback) => {
      written.push(String(chunk))
      callback()
    }
  })
  return { input, written, front: startFront(input, output, frontTable) }
}

/** Lets the streams deliver what was written (a turn of the event loop). */
const settle = () => new Promise((resolve) => setImmediate(resolve))

/**
 * A stand-in full server: reads lines and answers every request with `{ "served": method }`,
 * recording what it read.
 */
const fullServer = () => {
  const read: Array<string> = []
  const serve = (input: Readable, output: Writable) => {
    let buffer = ""
    input.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        read.push(line)
        const message = JSON.parse(line) as { id?: number; method: string }
        if (message.id !== undefined) {
          output.write(`${JSON.stringify({ result: { served: message.method }, jsonrpc: "2.0", id: message.id })}\n`)
        }
      }
    })
  }
  return { read, serve }
}

const ids = (lines: ReadonlyArray<string>) => lines.map((l) => JSON.parse(l) as { id: number; result: unknown })

describe("the MCP server's front", () => {
  it("answers the handshake itself, then hands over the call in order, with the initialize replayed and its second answer dropped", async () => {
    const { input, written, front } = session(table)
    input.write(`${INITIALIZE}\n${INITIALIZED}\n${LIST}\n${CALL}\n`)
    await settle()
    expect(ids(written)).toEqual([
      { result: { protocolVersion: "2025-06-18", ...table.initialize }, jsonrpc: "2.0", id: 0 },
      { result: table.toolsList, jsonrpc: "2.0", id: 1 }
    ])
    const full = fullServer()
    front.handOver(full.serve)
    input.write('{"jsonrpc":"2.0","id":0,"method":"ping"}\n')
    await settle()
    expect(full.read).toEqual([INITIALIZE, INITIALIZED, CALL, '{"jsonrpc":"2.0","id":0,"method":"ping"}'])
    // The full server's answer to the replayed initialize never reaches the client; a later
    // request that reuses its id is answered.
    expect(ids(written.slice(2))).toEqual([
      { result: { served: "tools/call" }, jsonrpc: "2.0", id: 2 },
      { result: { served: "ping" }, jsonrpc: "2.0", id: 0 }
    ])
  })

  it("answers nothing after the first line it does not know, even a handshake", async () => {
    const { input, written, front } = session(table)
    input.write(`${CALL}\n${LIST}\n`)
    await settle()
    expect(written).toEqual([])
    const full = fullServer()
    front.handOver(full.serve)
    await settle()
    expect(full.read).toEqual([CALL, LIST])
    expect(ids(written).map((a) => a.id)).toEqual([2, 1])
  })

  it("joins a line that arrives in pieces, and hands over the unfinished rest", async () => {
    const { input, written, front } = session(table)
    for (const piece of [LIST.slice(0, 10), LIST.slice(10), "\n", CALL.slice(0, 20)]) {
      input.write(piece)
      await settle()
    }
    expect(ids(written).map((a) => a.id)).toEqual([1])
    const full = fullServer()
    front.handOver(full.serve)
    input.write(`${CALL.slice(20)}\n`)
    await settle()
    expect(full.read).toEqual([CALL])
  })

  it("leaves an oversized line to the full server without holding more than its bound", async () => {
    const { input, written, front } = session(table)
    const huge = `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"pad":"${"x".repeat(MAX_FRONT_LINE_BYTES)}"}}`
    input.write(huge.slice(0, MAX_FRONT_LINE_BYTES + 10))
    input.write(`${huge.slice(MAX_FRONT_LINE_BYTES + 10)}\n${LIST}\n`)
    await settle()
    expect(written).toEqual([])
    const full = fullServer()
    front.handOver(full.serve)
    await settle()
    expect(full.read).toEqual([huge, LIST])
  })

  it("stops reading past what it may hold for the full server, and reads on after the hand-over", async () => {
    const { input, front } = session(table)
    const line = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"pad":"${"y".repeat(1024 * 1024)}"}}\n`
    input.write(CALL.concat("\n"))
    let accepted = 0
    // Bounded, so a front that never pauses fails here rather than looping on.
    while (accepted < 64 && input.write(line)) accepted++
    await settle()
    // The input is paused once the front holds more than its bound: the stream buffers the rest
    // and tells the writer to wait.
    expect(input.isPaused()).toBe(true)
    expect(accepted * line.length).toBeLessThan(MAX_HELD_BYTES + 2 * line.length + input.writableHighWaterMark)
    const full = fullServer()
    front.handOver(full.serve)
    input.end()
    await new Promise((resolve) => input.once("end", resolve))
    expect(full.read).toHaveLength(accepted + 2)
  })

  it("without a table answers nothing; a client that already closed its input ends the full server's too", async () => {
    const { input, written, front } = session(undefined)
    input.end(`${INITIALIZE}\n`)
    await settle()
    expect(written).toEqual([])
    const full = fullServer()
    let ended = false
    front.handOver((relay, output) => {
      relay.once("end", () => {
        ended = true
      })
      full.serve(relay, output)
    })
    await settle()
    expect(full.read).toEqual([INITIALIZE])
    expect(ended).toBe(true)
    expect(ids(written)).toEqual([{ result: { served: "initialize" }, jsonrpc: "2.0", id: 0 }])
  })
})
