import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * Test support: a loopback Anthropic Messages API for real Claude Code
 * (`ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`, any `ANTHROPIC_API_KEY`). It answers
 * `POST /v1/messages` (Claude Code adds `?beta=true`) with the server-sent events Claude Code
 * reads: `message_start`, then per content block `content_block_start`, `content_block_delta`
 * and `content_block_stop`, then `message_delta` (stop reason and usage) and `message_stop`. The
 * blocks are chosen by a script from the request, and every request is kept. Anything else
 * (token counting, telemetry) is answered 404 and listed in `refusals`.
 */
export interface MessagesRequestBody {
  readonly model?: string
  readonly system?: string | ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
  readonly tools?: ReadonlyArray<Record<string, unknown>>
  readonly stream?: boolean
  readonly [key: string]: unknown
}

export interface AnthropicRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The decoded JSON body; undefined when it was not JSON. */
  readonly body: MessagesRequestBody | undefined
}

/** One content block of an answer. */
export type AnswerBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }

/** Chooses the blocks answering one request (Claude Code's own side requests reach it too). */
export type AnthropicScript = (request: AnthropicRequest) => ReadonlyArray<AnswerBlock>

export interface ScriptedAnthropicServer {
  /** `http://127.0.0.1:<port>`, for ANTHROPIC_BASE_URL. */
  readonly baseUrl: string
  readonly requests: ReadonlyArray<AnthropicRequest>
  /** Requests answered with an error (not POST /v1/messages, not JSON, or the script threw). */
  readonly refusals: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const textAnswer = (text: string): AnswerBlock => ({ type: "text", text })
export const toolUseAnswer = (id: string, name: string, input: unknown): AnswerBlock => ({
  type: "tool_use",
  id,
  name,
  input
})

/** Every text a request carries: the system prompt and each message's text (string or blocks, nested results too). */
export const requestTexts = (request: AnthropicRequest): ReadonlyArray<string> => {
  const texts: Array<string> = []
  const walk = (value: unknown): void => {
    if (typeof value === "string") texts.push(value)
    else if (Array.isArray(value)) for (const v of value) walk(v)
    else if (typeof value === "object" && value !== null) {
      const block = value as { text?: unknown; content?: unknown }
      if (typeof block.text === "string") texts.push(block.text)
      if (block.content !== undefined) walk(block.content)
    }
  }
  walk(request.body?.system)
  for (const message of request.body?.messages ?? []) walk(message.content)
  return texts
}

/** The texts of the request's messages of one role. */
export const roleTexts = (request: AnthropicRequest, role: "user" | "assistant"): ReadonlyArray<string> =>
  requestTexts({
    ...request,
    body: { ...request.body, system: [], messages: (request.body?.messages ?? []).filter((m) => m.role === role) }
  })

/** Whether the request is the main turn (it offers tools), not one of Claude Code's side requests. */
export const offersTools = (request: AnthropicRequest) => (request.body?.tools ?? []).length > 0

const sse = (events: ReadonlyArray<{ readonly type: string; readonly [key: string]: unknown }>) =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")

let messageCounter = 0

const answerEvents = (model: string, blocks: ReadonlyArray<AnswerBlock>) => {
  const usage = { input_tokens: 10, output_tokens: 10 }
  const events: Array<{ readonly type: string; readonly [key: string]: unknown }> = [
    {
      type: "message_start",
      message: {
        id: `msg_scripted_${++messageCounter}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 }
      }
    }
  ]
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push(
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }
      )
    } else {
      events.push(
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} }
        },
        {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
        }
      )
    }
    events.push({ type: "content_block_stop", index })
  })
  const toolUse = blocks.some((b) => b.type === "tool_use")
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: toolUse ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens }
    },
    { type: "message_stop" }
  )
  return events
}

export const serveScriptedAnthropic = (script: AnthropicScript): Promise<ScriptedAnthropicServer> =>
  new Promise((resolve, reject) => {
    const requests: Array<AnthropicRequest> = []
    const refusals: Array<string> = []
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        let body: MessagesRequestBody | undefined
        try {
          body = JSON.parse(raw) as MessagesRequestBody
        } catch {
          body = undefined
        }
        const request: AnthropicRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
        requests.push(request)
        const refuse = (status: number, message: string) => {
          refusals.push(`${request.method} ${request.path}: ${message}`)
          res
            .writeHead(status, { "content-type": "application/json" })
            .end(JSON.stringify({ type: "error", error: { type: "not_found_error", message } }))
        }
        const path = request.path.split("?")[0] ?? ""
        if (request.method !== "POST" || path !== "/v1/messages") return refuse(404, "not scripted")
        if (body === undefined) return refuse(400, "the body is not JSON")
        let blocks: ReadonlyArray<AnswerBlock>
        try {
          blocks = script(request)
        } catch (e) {
          return refuse(500, `the script threw: ${e instanceof Error ? e.message : String(e)}`)
        }
        const model = typeof body.model === "string" ? body.model : "claude-scripted"
        if (body.stream === false) {
          res.writeHead(200, { "content-type": "application/json" }).end(
            JSON.stringify({
              id: `msg_scripted_${++messageCounter}`,
              type: "message",
              role: "assistant",
              model,
              content: blocks,
              stop_reason: blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
              stop_sequence: null,
              usage: { input_tokens: 10, output_tokens: 10 }
            })
          )
          return
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.end(sse(answerEvents(model, blocks)))
      })
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        requests,
        refusals,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
