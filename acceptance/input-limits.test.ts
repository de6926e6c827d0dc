import { randomUUID } from "node:crypto"
import * as Net from "node:net"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DaemonHome, isAlive, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import { type McpSession, mcpArgs, startMcp, structured, toolErrorOf } from "./support/mcp-client.js"

/** A credential near the start of a 100,000-character query, as an agent might paste a log. */
const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
const HUGE_QUERY = `why did ${TOKEN} fail ${"lorem ipsum ".repeat(8_400)}`.slice(0, 100_000)
const ELEVEN_MIB = 11 * 1024 * 1024

let home: DaemonHome
let mcp: McpSession

// One installation and one MCP session for the file: both tests only read, in order.
beforeAll(async () => {
  home = makeDaemonHome("detached")
  const install = await home.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  mcp = await startMcp({
    args: mcpArgs(home),
    env: { HOME: home.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
    cwd: home.home
  })
}, scaled(180_000))

afterAll(async () => {
  await mcp?.close().catch(() => undefined)
  home?.dispose()
})

/** Writes one raw request line to the daemon's socket and resolves with its first answer line. */
const askRaw = (socketPath: string, line: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = Net.createConnection(socketPath)
    let answer = ""
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within the bound; read so far: ${answer.slice(0, 300)}`))
    }, scaled(60_000))
    socket.on("error", reject)
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("utf8")
      const end = answer.indexOf("\n")
      if (end === -1) return
      clearTimeout(timer)
      socket.destroy()
      resolve(answer.slice(0, end))
    })
    socket.on("connect", () => socket.write(line))
  })

/** The longest line of a text. */
const longestLine = (text: string) => Math.max(0, ...text.split("\n").map((line) => line.length))

const textOf = (result: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }) =>
  result.content.map((block) => block.text ?? "").join("")

describe("the MCP server's limits", () => {
  it("refuses a 100,000-character query in a short error naming query and its bound, with no secret anywhere", async () => {
    const result = await mcp.call("search", { query: HUGE_QUERY })
    const text = textOf(result)
    expect(text.length, text.slice(0, 300)).toBeLessThan(1_000)
    expect(text).not.toContain("ghp_")
    const error = toolErrorOf(result)
    expect(error.kind).toBe("invalid_arguments")
    expect(error.fields).toEqual([{ field: "query", problem: expect.stringContaining("at most 4000 character") }])
    // What the server logged about it is short and redacted too.
    const stderr = mcp.stderr()
    expect(stderr).not.toContain("ghp_")
    expect(longestLine(stderr)).toBeLessThan(2_000)
  })

  it("answers an 11 MiB message with an invalid-request error, then serves the next call", async () => {
    const oversized = mcp.client.request(
      { method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(ELEVEN_MIB) } } },
      CallToolResultSchema,
      { timeout: scaled(120_000) }
    )
    await expect(oversized).rejects.toMatchObject({ code: -32600, message: expect.stringContaining("4,194,304 bytes") })
    const status = structured<{ readonly chunks?: number }>(await mcp.call("context_status"))
    expect(status).toBeTypeOf("object")
    expect(isAlive(mcp.pid)).toBe(true)
    expect(mcp.stderr()).not.toContain("xxxxxxxxxx")
  })
})

describe("open_session through the MCP server", () => {
  it("refuses a relative project path, or one with .. segments, naming the field; takes an absolute one", async () => {
    for (const project of ["relative/../path", "shop-api", "/home/dev/../../etc"]) {
      const error = toolErrorOf(await mcp.call("open_session", { binding_key: randomUUID(), project }))
      expect(error.kind, project).toBe("invalid_arguments")
      expect(error.fields, project).toEqual([{ field: "project", problem: expect.stringContaining("absolute path") }])
    }
    const opened = structured<{ readonly context_session_id?: string }>(
      await mcp.call("open_session", { binding_key: randomUUID(), project: "/home/dev/shop-api" })
    )
    expect(opened.context_session_id).toEqual(expect.any(String))
  })
})

describe("errors quote little", () => {
  it("the CLI refuses a 100,000-character query and an oversized option value in short, redacted errors", async () => {
    const [search, limit] = await Promise.all([
      home.blctx(["search", HUGE_QUERY]),
      home.blctx(["search", "x", "--limit", `${TOKEN}${"z".repeat(5_000)}`])
    ])
    expect(search.code, search.stderr.slice(0, 300)).toBe(1)
    expect(search.stderr).toContain("query")
    expect(search.stderr).toContain("4000")
    expect(limit.code, limit.stderr.slice(0, 300)).toBe(2)
    for (const output of [search.stdout, search.stderr, limit.stdout, limit.stderr]) {
      expect(output).not.toContain("ghp_")
      expect(output.length, output.slice(0, 300)).toBeLessThan(3_000)
    }
  })

  it("the daemon answers a request it cannot decode in a short, redacted message", async () => {
    const request = { _tag: "Request", id: "1", tag: "Search", payload: { query: HUGE_QUERY }, headers: [] }
    const answer = await askRaw(home.socketPath, `${JSON.stringify(request)}\n`)
    expect(answer.length, answer.slice(0, 300)).toBeLessThan(2_000)
    expect(answer).toContain("4000")
    expect(answer).not.toContain("ghp_")
  })
})
