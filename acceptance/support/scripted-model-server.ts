import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * Test support: a loopback model provider for real Codex (`wire_api = "responses"`). It answers
 * `POST /v1/responses` with the server-sent events Codex reads (`response.created`, then
 * `response.output_item.added` / `response.output_item.done` per item, then `response.completed`
 * with `usage`), the items chosen by a script from the request's content, and keeps every request.
 *
 * What Codex 0.171 sends (seen here, and shaped after openai/codex `core_test_support::responses`):
 * a JSON body `{model, stream: true, input, tool_choice, parallel_tool_calls, reasoning, ...}`
 * with no top-level `tools`; its own tools arrive as an `additional_tools` input item holding
 * `{type: "namespace", name, tools}` objects, and MCP servers' tools are deferred: a developer
 * message lists them under `<tools>Deferred tool namespaces:` as `- mcp__<server, - as _>: <the
 * server's instructions>`. The model calls one with a `function_call` item naming the namespace
 * and the tool, and the next request carries the `function_call_output`.
 */
export interface InputItem {
  readonly type: string
  readonly [key: string]: unknown
}

export interface ResponsesRequestBody {
  readonly model?: string
  readonly input?: ReadonlyArray<InputItem>
  readonly tools?: ReadonlyArray<Record<string, unknown>>
  readonly [key: string]: unknown
}

export interface ModelRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The decoded JSON body; undefined when the body was not JSON (the request was refused). */
  readonly body: ResponsesRequestBody | undefined
}

/** A Responses API output item (`message`, `function_call`, `custom_tool_call`, ...). */
export type OutputItem = { readonly type: string } & Record<string, unknown>

/** Chooses the output items answering one request (a title or compaction request reaches it too). */
export type Script = (request: ModelRequest) => ReadonlyArray<OutputItem>

export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>/v1`, the provider's `base_url`. */
  readonly baseUrl: string
  readonly requests: ReadonlyArray<ModelRequest>
  /** Requests answered with an error (not POST /v1/responses, not JSON, or the script threw). */
  readonly refusals: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

const sse = (events: ReadonlyArray<{ readonly type: string; readonly [key: string]: unknown }>) =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")

export const serveScriptedModel = (script: Script): Promise<ScriptedModelServer> =>
  new Promise((resolve, reject) => {
    const requests: Array<ModelRequest> = []
    const refusals: Array<string> = []
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        let body: ResponsesRequestBody | undefined
        try {
          body = JSON.parse(raw) as ResponsesRequestBody
        } catch {
          body = undefined
        }
        const request: ModelRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
        requests.push(request)
        const refuse = (status: number, message: string) => {
          refusals.push(`${request.method} ${request.path}: ${message}`)
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message } }))
        }
        if (request.method !== "POST" || !request.path.endsWith("/responses")) return refuse(404, "not scripted")
        if (body === undefined) {
          return refuse(400, `the body is not JSON (content-encoding ${req.headers["content-encoding"] ?? "none"})`)
        }
        let items: ReadonlyArray<OutputItem>
        try {
          items = script(request)
        } catch (error) {
          return refuse(500, `the script failed: ${error instanceof Error ? error.message : String(error)}`)
        }
        const n = requests.length
        const id = `resp_${n}`
        const numbered = items.map((item, i) => ({ id: `item_${n}_${i}`, ...item }))
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.end(
          sse([
            { type: "response.created", response: { id } },
            ...numbered.flatMap((item) => [
              { type: "response.output_item.added", item },
              { type: "response.output_item.done", item }
            ]),
            {
              type: "response.completed",
              response: {
                id,
                usage: {
                  input_tokens: 1,
                  input_tokens_details: null,
                  output_tokens: 1,
                  output_tokens_details: null,
                  total_tokens: 2
                }
              }
            }
          ])
        )
      })
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        requests,
        refusals,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

// Output items.

export const assistantMessage = (text: string): OutputItem => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }]
})

/** A call of a function tool; MCP tools are called by `namespace` (`mcp__<server>`) and `name`. */
export const functionCall = (call: {
  readonly callId: string
  readonly name: string
  readonly namespace?: string
  readonly arguments: unknown
}): OutputItem => ({
  type: "function_call",
  call_id: call.callId,
  ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
  name: call.name,
  arguments: JSON.stringify(call.arguments)
})

/** A call of a freeform tool, such as code mode's `exec` (JavaScript in `input`). */
export const customToolCall = (call: {
  readonly callId: string
  readonly name: string
  readonly input: string
}): OutputItem => ({ type: "custom_tool_call", call_id: call.callId, name: call.name, input: call.input })

// Reading a request.

export const inputItems = (request: ModelRequest): ReadonlyArray<InputItem> => request.body?.input ?? []

const textsOf = (item: InputItem): ReadonlyArray<string> =>
  Array.isArray(item.content)
    ? (item.content as ReadonlyArray<{ type?: unknown; text?: unknown }>).flatMap((part) =>
        typeof part.text === "string" ? [part.text] : []
      )
    : []

/** The text of every message from this role, in order. */
export const messageTexts = (request: ModelRequest, role: "user" | "developer" | "assistant") =>
  inputItems(request)
    .filter((item) => item.type === "message" && item.role === role)
    .flatMap(textsOf)

/**
 * The output a tool call answered with, as text: `function_call_output` / `custom_tool_call_output`
 * with this call id (a string, or content items whose texts are joined); undefined when absent.
 */
export const callOutput = (request: ModelRequest, callId: string): string | undefined => {
  const item = inputItems(request).find(
    (i) => (i.type === "function_call_output" || i.type === "custom_tool_call_output") && i.call_id === callId
  )
  if (item === undefined) return undefined
  if (typeof item.output === "string") return item.output
  return Array.isArray(item.output) ? textsOf({ type: "output", content: item.output }).join("") : ""
}

export interface OfferedNamespace {
  readonly name: string
  readonly description: string
  /** Listed under "Deferred tool namespaces": offered by name, its tools loaded on demand. */
  readonly deferred: boolean
  /** The tools' names when the namespace object lists them (deferred namespaces do not). */
  readonly tools: ReadonlyArray<string>
}

const namespaceObject = (tool: Record<string, unknown>): Array<OfferedNamespace> => {
  if (tool.type !== "namespace" || typeof tool.name !== "string") return []
  const tools = Array.isArray(tool.tools) ? (tool.tools as Array<{ readonly name?: unknown }>) : []
  return [
    {
      name: tool.name,
      description: typeof tool.description === "string" ? tool.description : "",
      deferred: false,
      tools: tools.flatMap((t) => (typeof t.name === "string" ? [t.name] : []))
    }
  ]
}

/**
 * Every tool namespace the request offers the model: namespace objects in `tools` or in an
 * `additional_tools` input item, and the deferred namespaces a developer message lists.
 */
export const offeredNamespaces = (request: ModelRequest): ReadonlyArray<OfferedNamespace> => {
  const toolObjects = [
    ...(request.body?.tools ?? []),
    ...inputItems(request).flatMap((item) =>
      item.type === "additional_tools" && Array.isArray(item.tools)
        ? (item.tools as Array<Record<string, unknown>>)
        : []
    )
  ]
  const objects = toolObjects.flatMap(namespaceObject)
  const deferred = messageTexts(request, "developer").flatMap((text) => {
    const block = /<tools>\s*(?:Added )?[Dd]eferred tool namespaces:\n([\s\S]*?)<\/tools>/.exec(text)?.[1] ?? ""
    return [...block.matchAll(/^- ([^:\n]+)(?:: (.*))?$/gm)].map(
      ([, name, description]): OfferedNamespace => ({
        name: (name ?? "").trim(),
        description: description ?? "",
        deferred: true,
        tools: []
      })
    )
  })
  return [...objects, ...deferred]
}

/** What Codex says a request is for (`x-codex-turn-metadata` `request_kind`, e.g. "turn"). */
export const requestKind = (request: ModelRequest): string => {
  const header = request.headers["x-codex-turn-metadata"]
  try {
    const kind = (JSON.parse(typeof header === "string" ? header : "{}") as { request_kind?: unknown }).request_kind
    return typeof kind === "string" ? kind : "unknown"
  } catch {
    return "unknown"
  }
}
