import type { ChildProcess } from "node:child_process"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import { expect } from "vitest"
import type { DaemonHome } from "./daemon-harness.js"
import { bundledProgram, installationArgs } from "./isolated-home.js"

/**
 * The MCP server the tests run: the bundle installations register (`dist/bin/blctx-mcp.mjs`), or
 * the entry named by BLCTX_TEST_MCP_ENTRY (e.g. the unbundled `dist/programs/mcp.js`).
 */
export const mcpEntry = () => process.env.BLCTX_TEST_MCP_ENTRY ?? bundledProgram("blctx-mcp")

/** The command line the installation registers: its id and its four XDG roots. */
export const mcpArgs = (home: DaemonHome, installationId: string = home.installationId()) =>
  installationArgs(home, installationId)

/**
 * The SDK's stdio transport, also keeping every byte the server wrote to stdout, so a test can
 * check that nothing but JSON-RPC ever reached it. The SDK keeps the child in a private field;
 * if that changes, `start` fails loudly rather than letting a purity check pass on nothing.
 */
class RecordingStdioClientTransport extends StdioClientTransport {
  readonly stdout: Array<Buffer> = []
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  private resolveExit: (exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null }) => void = () =>
    undefined

  constructor(params: StdioServerParameters) {
    super(params)
    this.exited = new Promise((resolve) => {
      this.resolveExit = resolve
    })
  }

  override async start() {
    await super.start()
    const child = (this as unknown as { readonly _process?: ChildProcess })._process
    if (child?.stdout == null) throw new Error("the SDK's stdio transport no longer exposes the child's stdout")
    child.stdout.on("data", (chunk: Buffer) => this.stdout.push(chunk))
    child.on("exit", (code, signal) => this.resolveExit({ code, signal }))
  }
}

export interface McpSession {
  readonly client: Client
  readonly pid: number
  /** Everything the server wrote to stdout so far, as text. */
  readonly rawStdout: () => string
  readonly stderr: () => string
  readonly call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>
  /** Closes stdin (as a client does) and waits; says how the server ended. */
  readonly close: () => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** Starts the server with exactly this environment (plus the SDK's defaults) and initialises MCP. */
export const startMcp = async (options: {
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly cwd?: string
}): Promise<McpSession> => {
  const transport = new RecordingStdioClientTransport({
    command: process.execPath,
    args: [mcpEntry(), ...options.args],
    env: options.env,
    stderr: "pipe",
    ...(options.cwd === undefined ? {} : { cwd: options.cwd })
  })
  let stderr = ""
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString("utf8")
  })
  const client = new Client({ name: "blctx-acceptance", version: "1.0.0" })
  await client.connect(transport)
  return {
    client,
    pid: transport.pid ?? -1,
    rawStdout: () => Buffer.concat(transport.stdout).toString("utf8"),
    stderr: () => stderr,
    call: (name, args = {}) =>
      client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }) as Promise<CallToolResult>,
    close: async () => {
      await client.close()
      return transport.exited
    }
  }
}

/** The JSON document a tool error carries in its text block. */
export interface ToolError {
  readonly kind: string
  readonly tool: string
  readonly message: string
  readonly remediation: string
  readonly fields?: ReadonlyArray<{ readonly field: string; readonly problem: string }>
}

export const toolErrorOf = (result: CallToolResult): ToolError => {
  if (result.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(result).slice(0, 500)}`)
  const [block] = result.content
  if (block?.type !== "text") throw new Error("a tool error carries one text block")
  return (JSON.parse(block.text) as { readonly error: ToolError }).error
}

/** Every stdout line is one whole JSON-RPC message; returns how many there were. */
export const jsonRpcLines = (raw: string): number => {
  expect(raw.endsWith("\n"), "stdout ends with a whole line").toBe(true)
  const lines = raw.slice(0, -1).split("\n")
  for (const line of lines) {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      throw new Error(`not JSON on stdout: ${line.slice(0, 300)}`)
    }
    expect(JSONRPCMessageSchema.safeParse(message).success, `not a JSON-RPC message: ${line.slice(0, 300)}`).toBe(true)
  }
  return lines.length
}

/** A tool's structured answer, failing the test (with the start of its text) when it is an error result. */
export const structured = <A>(result: CallToolResult): A => {
  expect(result.isError ?? false, JSON.stringify(result.content).slice(0, 500)).toBe(false)
  return result.structuredContent as A
}
