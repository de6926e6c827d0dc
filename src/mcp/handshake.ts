/**
 * What blctx's MCP server answers before any tool is called (`initialize`, `tools/list`, `ping`),
 * as data, so the effect-free front (`mcp-front.ts`) can answer it while the full server still
 * loads. The table is recorded from the live server at build time (`handshake-derive.ts`, written
 * to dist/mcp-handshake.json by scripts/bundle.mjs), never written by hand. Only types come from
 * the MCP SDK (erased at build): this module stays out of effect and the SDK.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

/** The table's file, in the package's dist folder. */
export const HANDSHAKE_TABLE_FILE = "mcp-handshake.json"

export interface HandshakeTable {
  /** The protocol versions the server accepts; any other is answered with `latestVersion`. */
  readonly supportedVersions: ReadonlyArray<string>
  readonly latestVersion: string
  /** The `initialize` result without its `protocolVersion` (capabilities, serverInfo, instructions). */
  readonly initialize: Readonly<Record<string, unknown>>
  /** The `tools/list` result. */
  readonly toolsList: Readonly<Record<string, unknown>>
}

/** What the front does with one line the client sent. */
export type Judgement =
  /** Answer it with `line`; `replay`: the full server must see it too (it keeps the client's details). */
  | { readonly _tag: "Answer"; readonly line: string; readonly replay: boolean }
  /** Nothing to answer (a notification the full server should see). */
  | { readonly _tag: "Replay" }
  /** Not a handshake the front knows: from here on, the full server answers everything. */
  | { readonly _tag: "HandOver" }

const HAND_OVER: Judgement = { _tag: "HandOver" }

type Json = Readonly<Record<string, unknown>>
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const isId = (id: unknown): id is string | number => typeof id === "string" || Number.isSafeInteger(id)

/** The answer line as the full server's transport writes it (`stdio-transport.ts`: JSON and a newline). */
const answerLine = (id: string | number, result: Json) => `${JSON.stringify({ result, jsonrpc: "2.0", id })}\n`

/**
 * An `initialize` the SDK would take: a protocol version, capabilities and the client's name and
 * version. Anything less well-formed is left to the full server, which answers its own error.
 */
const initializeVersion = (params: unknown): string | undefined => {
  if (!isObject(params) || !isObject(params.capabilities) || !isObject(params.clientInfo)) return undefined
  if (typeof params.clientInfo.name !== "string" || typeof params.clientInfo.version !== "string") return undefined
  return typeof params.protocolVersion === "string" ? params.protocolVersion : undefined
}

/** The SDK's negotiation: the client's version when the server supports it, else the latest. */
const negotiated = (table: HandshakeTable, requested: string) =>
  table.supportedVersions.includes(requested) ? requested : table.latestVersion

const answerRequest = (table: HandshakeTable, id: string | number, method: unknown, params: unknown): Judgement => {
  switch (method) {
    case "initialize": {
      const requested = initializeVersion(params)
      if (requested === undefined) return HAND_OVER
      const result = { protocolVersion: negotiated(table, requested), ...table.initialize }
      return { _tag: "Answer", line: answerLine(id, result), replay: true }
    }
    case "tools/list":
      return params === undefined || isObject(params)
        ? { _tag: "Answer", line: answerLine(id, table.toolsList), replay: false }
        : HAND_OVER
    case "ping":
      return { _tag: "Answer", line: answerLine(id, {}), replay: false }
    default:
      return HAND_OVER
  }
}

/** What to do with `text`, one line from the client (without its newline). */
export const judgeLine = (table: HandshakeTable, text: string): Judgement => {
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    return HAND_OVER
  }
  if (!isObject(message) || message.jsonrpc !== "2.0" || typeof message.method !== "string") return HAND_OVER
  if (!("id" in message)) return message.method === "notifications/initialized" ? { _tag: "Replay" } : HAND_OVER
  return isId(message.id) ? answerRequest(table, message.id, message.method, message.params) : HAND_OVER
}

/** The id of an answer line (`result` or `error`), or undefined for anything else. */
export const answerId = (line: string): string | number | undefined => {
  try {
    const message = JSON.parse(line) as JSONRPCMessage
    return isObject(message) && ("result" in message || "error" in message) && isId(message.id) ? message.id : undefined
  } catch {
    return undefined
  }
}

/** A table read from its file, when it has the table's shape; anything else is no table. */
export const parseHandshakeTable = (text: string): HandshakeTable | undefined => {
  try {
    const table = JSON.parse(text) as unknown
    if (!isObject(table) || !isObject(table.initialize) || !isObject(table.toolsList)) return undefined
    const { supportedVersions, latestVersion } = table
    if (!Array.isArray(supportedVersions) || !supportedVersions.every((v) => typeof v === "string")) return undefined
    return typeof latestVersion === "string" ? (table as unknown as HandshakeTable) : undefined
  } catch {
    return undefined
  }
}
