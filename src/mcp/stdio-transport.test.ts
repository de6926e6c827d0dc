import { PassThrough } from "node:stream"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { BoundedStdioTransport } from "./stdio-transport.js"

const LIMIT = 1024

/** A transport over in-memory streams; what it answers is collected line by line. */
const harness = async (maxLineBytes = LIMIT) => {
  const input = new PassThrough()
  const output = new PassThrough()
  const transport = new BoundedStdioTransport(input, output, { maxLineBytes })
  const received: Array<JSONRPCMessage> = []
  const answers: Array<Record<string, unknown>> = []
  let closed = false
  let pending = ""
  output.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8")
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) answers.push(JSON.parse(line))
  })
  transport.onmessage = (message) => received.push(message)
  transport.onclose = () => {
    closed = true
  }
  transport.onerror = () => undefined
  await transport.start()
  /** Writes chunks, then waits until the transport has seen `messages` messages. */
  const feed = async (chunks: ReadonlyArray<string | Buffer>, messages: number) => {
    for (const chunk of chunks) input.write(chunk)
    await expect.poll(() => received.length, { timeout: 5_000 }).toBe(messages)
  }
  return { transport, input, received, answers, feed, isClosed: () => closed }
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`

describe("the bounded stdio transport", () => {
  it("answers an oversized line with an invalid-request error naming the limit, its id kept, and goes on", async () => {
    const h = await harness()
    const head = '{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"search","arguments":{"query":"'
    await h.feed([head, "x".repeat(LIMIT), "x".repeat(LIMIT * 3), '"}}}\n', ping(42)], 1)
    expect(h.received).toEqual([{ jsonrpc: "2.0", id: 42, method: "ping" }])
    await expect.poll(() => h.answers.length).toBe(1)
    expect(h.answers[0]).toMatchObject({ jsonrpc: "2.0", id: 41, error: { code: -32600 } })
    expect(h.answers[0]).toMatchObject({ error: { message: expect.stringContaining("1,024 bytes") } })
    expect(h.isClosed()).toBe(false)
  })

  it("takes the id that ends an oversized line (as the SDK writes it), else answers with id null", async () => {
    const h = await harness()
    const filler = "y".repeat(LIMIT * 2)
    await h.feed(
      [
        `{"params":{"id":5,"x":"${filler}"},"id":6}\n`,
        `{"params":{"x":"${filler}","id":8},"id":9,"method":"m"}\n`,
        `{"method":"m","params":{"x":"${filler}","id":7}}\n`,
        ping(1)
      ],
      1
    )
    await expect.poll(() => h.answers.length).toBe(3)
    expect(h.answers.map((a) => a.id)).toEqual([6, null, null])
    expect(h.answers.every((a) => (a.error as { code: number }).code === -32600)).toBe(true)
  })

  it("never holds more than its bound of one line while discarding it", async () => {
    const h = await harness(4 * LIMIT)
    const piece = "z".repeat(LIMIT)
    for (let i = 0; i < 64; i++) {
      h.input.write(piece)
      await new Promise((resolve) => setImmediate(resolve))
      expect(h.transport.bufferedBytes).toBeLessThanOrEqual(4 * LIMIT)
    }
    await h.feed(["\n", ping(1)], 1)
    await expect.poll(() => h.answers.length).toBe(1)
  })

  it("joins a message split across chunks, even inside a multi-byte character", async () => {
    const h = await harness()
    const bytes = Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping", params: { é: "€" } })}\r\n`)
    const cut = bytes.indexOf(Buffer.from("€")) + 1
    await h.feed([bytes.subarray(0, 10), bytes.subarray(10, cut), bytes.subarray(cut)], 1)
    expect(h.received).toEqual([{ jsonrpc: "2.0", id: 7, method: "ping", params: { é: "€" } }])
    expect(h.answers).toEqual([])
  })

  it("answers a malformed line with a parse error, and a non-message with an invalid request, and goes on", async () => {
    const h = await harness()
    await h.feed(['{"jsonrpc": "2.0", "id": 3, "method": \n', '{"jsonrpc":"2.0","id":4}\n', "\n", ping(5)], 1)
    expect(h.received).toEqual([{ jsonrpc: "2.0", id: 5, method: "ping" }])
    await expect.poll(() => h.answers.length).toBe(2)
    expect(h.answers[0]).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
    expect(h.answers[1]).toMatchObject({ jsonrpc: "2.0", id: 4, error: { code: -32600 } })
  })

  it("writes what it sends as one line, and stops reading once closed", async () => {
    const h = await harness()
    await h.transport.send({ jsonrpc: "2.0", id: 1, result: {} })
    await expect.poll(() => h.answers).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }])
    await h.transport.close()
    expect(h.isClosed()).toBe(true)
    h.input.write(ping(2))
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.received).toEqual([])
  })
})
