import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import {
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/sdk/types.js"
import { Runtime } from "effect"
import type { HandshakeTable } from "./handshake.js"
import { type McpServices, makeMcpServer } from "./mcp-server.js"

/**
 * The live server's answers to `messages` (one per request, in order), over an in-memory
 * transport. No tool is called, so the server runs on the default runtime: a handshake needs
 * none of its services.
 */
export const liveAnswers = async (messages: ReadonlyArray<JSONRPCMessage>): Promise<ReadonlyArray<JSONRPCMessage>> => {
  const server = makeMcpServer(Runtime.defaultRuntime as Runtime.Runtime<McpServices>)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const requests = messages.filter((m) => "id" in m && "method" in m) as ReadonlyArray<{ readonly id: unknown }>
  const answers = new Map<unknown, JSONRPCMessage>()
  const all = new Promise<void>((resolve) => {
    clientSide.onmessage = (message) => {
      answers.set((message as { readonly id?: unknown }).id, message)
      if (answers.size === requests.length) resolve()
    }
  })
  await server.connect(serverSide)
  await clientSide.start()
  for (const message of messages) await clientSide.send(message)
  if (requests.length > 0) await all
  await server.close()
  return requests.map((r) => answers.get(r.id) as JSONRPCMessage)
}

const INITIALIZE: JSONRPCMessage = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "build", version: "1" } }
}
const TOOLS_LIST: JSONRPCMessage = { jsonrpc: "2.0", id: 2, method: "tools/list" }

/**
 * The handshake table the front answers from (`handshake.ts`), recorded from the live server's
 * own answers and the SDK's version list, so it cannot say anything the server would not.
 */
export const deriveHandshakeTable = async (): Promise<HandshakeTable> => {
  const [initialized, listed] = (await liveAnswers([INITIALIZE, TOOLS_LIST])) as ReadonlyArray<{
    readonly result?: Record<string, unknown>
  }>
  const { protocolVersion: _negotiated, ...initialize } = initialized?.result ?? {}
  if (initialized?.result === undefined || listed?.result === undefined) {
    throw new Error("the MCP server did not answer initialize and tools/list")
  }
  return {
    supportedVersions: SUPPORTED_PROTOCOL_VERSIONS,
    latestVersion: LATEST_PROTOCOL_VERSION,
    initialize,
    toolsList: listed.result
  }
}
