/**
 * The MCP server's stdio transport: newline-delimited JSON-RPC on stdin and stdout, like the
 * SDK's `StdioServerTransport`, but bounded and forgiving. The SDK's buffers a whole line and,
 * past 10 MiB, throws and closes itself, which ended the server without an answer. Here a line
 * over `MAX_MCP_MESSAGE_BYTES` is dropped as it streams (memory stays bounded) and answered with a
 * JSON-RPC "invalid request" error naming the limit, with the request's id when it starts or ends
 * the line (else null: nothing else of the line is kept); a line that is not JSON is answered with a
 * parse error, one that is not a JSON-RPC message with an invalid request. The session goes on.
 */
import type { Readable, Writable } from "node:stream"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import { LineSplitter, type SplitLine } from "./line-splitter.js"

/**
 * The largest message the MCP server reads: 4 MiB, the daemon's own request bound. The largest
 * legitimate call (a note at its text bound, a search at its query bound) is far below it.
 */
export const MAX_MCP_MESSAGE_BYTES = 4 * 1024 * 1024

type RequestId = string | number

/** An error answer to a line that carried no message we could take (id null when none was found). */
const errorAnswer = (id: RequestId | null, code: number, message: string) => ({
  jsonrpc: "2.0" as const,
  id,
  error: { code, message }
})

const ID_KEY = /^\s*"id"\s*:\s*(-?\d{1,16}(?![\d.eE])|"(?:[^"\\]|\\.){0,200}")/

/**
 * The `id` of a JSON object whose start is `head`, found by scanning its top-level keys (a nested
 * `id`, inside `params`, is not it), or null when the head does not show one.
 */
export const leadingId = (head: string): RequestId | null => {
  let depth = 0
  let inString = false
  for (let i = 0; i < head.length; i++) {
    const c = head[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
      continue
    }
    if (c === "{" || c === "[") depth++
    else if (c === "}" || c === "]") depth--
    else if (c === '"') {
      const afterOpen = head[i - 1]
      // A key at the top level follows `{` or `,` (whitespace aside).
      if (depth === 1 && (afterOpen === "{" || afterOpen === "," || /\s/.test(afterOpen ?? ""))) {
        const match = ID_KEY.exec(head.slice(i))
        if (match?.[1] !== undefined) {
          try {
            return JSON.parse(match[1]) as RequestId
          } catch {
            return null
          }
        }
      }
      inString = true
    }
  }
  return null
}

/**
 * The `id` that ends the JSON object whose end is `tail` (`..."id":7}`), as the MCP SDK writes its
 * requests (the id last): the final brace closes the top-level object, so the key is its own.
 */
export const trailingId = (tail: string): RequestId | null => {
  const match = /"id"\s*:\s*(-?\d{1,16}|"[A-Za-z0-9_.:-]{1,100}")\s*\}\s*$/.exec(tail.replace(/\r$/, ""))
  return match?.[1] === undefined ? null : (JSON.parse(match[1]) as RequestId)
}

/** The id of a decoded JSON value that is an object with a string or number id, else null. */
const idOf = (value: unknown): RequestId | null => {
  if (typeof value !== "object" || value === null || !("id" in value)) return null
  const id = (value as { id: unknown }).id
  return typeof id === "string" || typeof id === "number" ? id : null
}

export interface BoundedStdioOptions {
  /** The longest line read; longer ones are refused (default `MAX_MCP_MESSAGE_BYTES`). */
  readonly maxLineBytes?: number
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private readonly splitter: LineSplitter
  private readonly maxLineBytes: number
  private started = false

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    options: BoundedStdioOptions = {}
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_MCP_MESSAGE_BYTES
    this.splitter = new LineSplitter(this.maxLineBytes)
  }

  /** Bytes of an unfinished line held in memory. */
  get bufferedBytes() {
    return this.splitter.bufferedBytes
  }

  async start() {
    if (this.started) throw new Error("BoundedStdioTransport already started")
    this.started = true
    this.input.on("data", this.onData)
    this.input.on("error", this.onInputError)
  }

  async close() {
    this.input.off("data", this.onData)
    this.input.off("error", this.onInputError)
    if (this.input.listenerCount("data") === 0) this.input.pause()
    this.splitter.clear()
    this.onclose?.()
  }

  send(message: JSONRPCMessage | ReturnType<typeof errorAnswer>): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.output.once("drain", resolve)
    })
  }

  private readonly onInputError = (error: Error) => this.onerror?.(error)

  private readonly onData = (chunk: Buffer | string) => {
    for (const line of this.splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)) this.handle(line)
  }

  private handle(line: SplitLine) {
    if (line._tag === "Oversized")
      return this.refuseOversized(leadingId(line.head) ?? trailingId(line.tail), line.bytes)
    if (line.text.trim() === "") return
    let value: unknown
    try {
      value = JSON.parse(line.text)
    } catch {
      return this.refuse(null, ErrorCode.ParseError, "Parse error: the message is not valid JSON")
    }
    const message = JSONRPCMessageSchema.safeParse(value)
    if (!message.success) {
      return this.refuse(idOf(value), ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
    }
    this.onmessage?.(message.data)
  }

  private refuseOversized(id: RequestId | null, bytes: number) {
    const limit = this.maxLineBytes.toLocaleString("en-US")
    this.refuse(
      id,
      ErrorCode.InvalidRequest,
      `Invalid Request: the message is over the ${limit} bytes a blctx MCP message may have (${bytes.toLocaleString("en-US")} bytes read); send a smaller one`
    )
  }

  /** Answers a line that could not be taken, and tells the server (its log) in a few words. */
  private refuse(id: RequestId | null, code: number, message: string) {
    this.onerror?.(new Error(message))
    void this.send(errorAnswer(id, code, message))
  }
}
