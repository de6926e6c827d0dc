import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { beforeAll, describe, expect, it } from "vitest"
import { type HandshakeTable, judgeLine, parseHandshakeTable } from "./handshake.js"
import { deriveHandshakeTable, liveAnswers } from "./handshake-derive.js"

let table: HandshakeTable
beforeAll(async () => {
  table = await deriveHandshakeTable()
})

const initialize = (id: string | number, protocolVersion: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, capabilities: { roots: {} }, clientInfo: { name: "codex-mcp-client", version: "0.171.0" } }
})

describe("the handshake the front answers", () => {
  it.each([
    ["initialize, a version the server supports", initialize(0, "2025-06-18")],
    ["initialize, the oldest version it supports, a string id", initialize("init-1", "2024-11-05")],
    ["initialize, a version it does not know (it answers its latest)", initialize(7, "2099-01-01")],
    ["tools/list", { jsonrpc: "2.0", id: 1, method: "tools/list" } as JSONRPCMessage],
    ["tools/list with params", { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} } as JSONRPCMessage],
    ["ping", { jsonrpc: "2.0", id: 3, method: "ping" } as JSONRPCMessage]
  ])("%s: byte for byte what the full server answers", async (_what, message) => {
    const judged = judgeLine(table, JSON.stringify(message))
    const [live] = await liveAnswers([message])
    expect(judged).toEqual({
      _tag: "Answer",
      line: `${JSON.stringify(live)}\n`,
      replay: (message as { method: string }).method === "initialize"
    })
  })

  it("passes the initialized notification on to the full server", () => {
    expect(judgeLine(table, '{"jsonrpc":"2.0","method":"notifications/initialized"}')).toEqual({ _tag: "Replay" })
  })

  it.each([
    ["a tool call", '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{}}}'],
    ["a line that is not JSON", '{"jsonrpc":"2.0","id":1,"method":"initialize"'],
    [
      "an initialize without clientInfo",
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}'
    ],
    ["an initialize without params", '{"jsonrpc":"2.0","id":1,"method":"initialize"}'],
    ["a request whose id is null", '{"jsonrpc":"2.0","id":null,"method":"ping"}'],
    ["a request whose id is a fraction", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}'],
    ["a batch", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'],
    ["no jsonrpc version", '{"id":1,"method":"ping"}'],
    ["tools/list whose params is not an object", '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}'],
    ["another notification", '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'],
    ["a method it does not serve", '{"jsonrpc":"2.0","id":1,"method":"resources/list"}']
  ])("leaves %s to the full server", (_what, line) => {
    expect(judgeLine(table, line)).toEqual({ _tag: "HandOver" })
  })
})

describe("parseHandshakeTable", () => {
  it("reads the table as the build writes it, and nothing of another shape", () => {
    expect(parseHandshakeTable(JSON.stringify(table))).toEqual(table)
    for (const text of [
      "",
      "{",
      "null",
      "[]",
      JSON.stringify({ ...table, latestVersion: 1 }),
      JSON.stringify({ ...table, supportedVersions: [1] }),
      JSON.stringify({ ...table, toolsList: [] }),
      JSON.stringify({ ...table, initialize: undefined })
    ]) {
      expect(parseHandshakeTable(text)).toBeUndefined()
    }
  })

  it("is recorded from the live server: every tool, the server's name and instructions", async () => {
    const [live] = await liveAnswers([{ jsonrpc: "2.0", id: 1, method: "tools/list" }])
    expect(table.toolsList).toEqual((live as { result: unknown }).result)
    expect(table.initialize).toMatchObject({ serverInfo: { name: "blctx" }, capabilities: { tools: {} } })
    expect(table.supportedVersions).toContain(table.latestVersion)
  })
})
