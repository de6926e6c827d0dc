import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * Test support: a loopback Gemini API (`generativelanguage` v1beta) for the real Gemini CLI.
 *
 * How Gemini CLI 0.61.0 is made to use it, headless and offline (see support/real-gemini.ts):
 * - `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>`: the CLI hands it to @google/genai as the
 *   base URL for every auth type but Vertex (`createContentGeneratorConfig`). On its own that
 *   variable selects the `gateway` auth type, which the non-interactive path refuses ("Invalid
 *   auth method selected.", exit 41); so `~/.gemini/settings.json` sets
 *   `security.auth.selectedType = "gemini-api-key"` and `GEMINI_API_KEY` is any string.
 * - `gemini -p "<prompt>" --output-format json --skip-trust --model <name>` runs one turn and
 *   prints `{session_id, response, stats}`. `--skip-trust` trusts the working folder for this run.
 *   A named model (not `auto`) skips the routing classifier, which otherwise asks
 *   `:generateContent` for `{complexity_reasoning, complexity_score}` first.
 * - settings.json `privacy.usageStatisticsEnabled = false` and `telemetry.enabled = false` keep
 *   Clearcut logging and telemetry off; `general.enableAutoUpdate = false` and
 *   `ide.enabled = false` keep the update check and the IDE client away; the environment carries
 *   no proxy, and HOME is the test home, so nothing reaches the network.
 *
 * - MCP tools reach the model as `mcp_<server>_<tool>` (`mcp_base-layer-context_search`). A
 *   headless run offers one only when it may run without asking: `--allowed-tools
 *   mcp_<server>_<tool>` (or `trust: true` on the server's `mcpServers` entry); `--skip-trust`
 *   covers the folder for the run. The result comes back to the model wrapped in
 *   `<untrusted_context>`. (`gemini mcp list` reports a user-level server `Disabled` in a folder
 *   not in `~/.gemini/trustedFolders.json`.)
 *
 * The CLI calls `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` for the main turn
 * (answered with one `data: <GenerateContentResponse>` event per part, the last carrying
 * `finishReason` and `usageMetadata`) and `POST /v1beta/models/<model>:generateContent` for
 * side requests (routing, JSON helpers), and may call `:countTokens`. The reply's parts are chosen
 * by a script from the request; a `functionCall` part makes the CLI run the tool and send its
 * `functionResponse` in the next request. Any other path is answered 404 and listed in `refusals`.
 */
export interface GeminiPart {
  readonly text?: string
  readonly functionCall?: { readonly id?: string; readonly name: string; readonly args?: unknown }
  readonly functionResponse?: { readonly id?: string; readonly name: string; readonly response?: unknown }
  readonly [key: string]: unknown
}

export interface GeminiContent {
  readonly role?: string
  readonly parts?: ReadonlyArray<GeminiPart>
}

export interface GenerateContentBody {
  readonly contents?: ReadonlyArray<GeminiContent>
  readonly systemInstruction?: GeminiContent
  readonly tools?: ReadonlyArray<{ readonly functionDeclarations?: ReadonlyArray<{ readonly name: string }> }>
  readonly [key: string]: unknown
}

export interface GeminiRequest {
  readonly method: string
  /** The path with its query (`/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`). */
  readonly path: string
  /** `streamGenerateContent`, `generateContent`, `countTokens`, or null for any other path. */
  readonly action: string | null
  /** The model named in the path. */
  readonly model: string | null
  readonly headers: Http.IncomingHttpHeaders
  /** The decoded JSON body; undefined when it was not JSON. */
  readonly body: GenerateContentBody | undefined
}

/** Chooses the parts answering one request (the CLI's side requests reach it too). */
export type GeminiScript = (request: GeminiRequest) => ReadonlyArray<GeminiPart>

export interface ScriptedGeminiServer {
  /** `http://127.0.0.1:<port>`, for GOOGLE_GEMINI_BASE_URL. */
  readonly baseUrl: string
  readonly requests: ReadonlyArray<GeminiRequest>
  /** Requests answered with an error (an unknown path, not JSON, or the script threw). */
  readonly refusals: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

export const textPart = (text: string): GeminiPart => ({ text })
export const functionCallPart = (name: string, args: unknown): GeminiPart => ({ functionCall: { name, args } })

/** The names of the functions the request offers (built-in tools and MCP tools alike). */
export const offeredFunctions = (request: GeminiRequest): ReadonlyArray<string> =>
  (request.body?.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name))

/** Whether the request is a main turn (it offers tools), not one of the CLI's side requests. */
export const offersTools = (request: GeminiRequest) => offeredFunctions(request).length > 0

/** The texts of the request's contents of one role (`user` or `model`). */
export const roleTexts = (request: GeminiRequest, role: "user" | "model"): ReadonlyArray<string> =>
  (request.body?.contents ?? [])
    .filter((c) => c.role === role)
    .flatMap((c) => (c.parts ?? []).flatMap((p) => (typeof p.text === "string" ? [p.text] : [])))

/** The function responses the request carries, newest last (what a tool call returned). */
export const functionResponses = (
  request: GeminiRequest
): ReadonlyArray<{ readonly name: string; readonly text: string }> =>
  (request.body?.contents ?? []).flatMap((c) =>
    (c.parts ?? []).flatMap((p) =>
      p.functionResponse === undefined
        ? []
        : [{ name: p.functionResponse.name, text: JSON.stringify(p.functionResponse.response ?? null) }]
    )
  )

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }

const candidateOf = (parts: ReadonlyArray<GeminiPart>, last: boolean) => ({
  content: { role: "model", parts },
  index: 0,
  ...(last ? { finishReason: "STOP" } : {})
})

/** One server-sent event per part; the last event ends the turn and carries the usage. */
const streamEvents = (model: string, parts: ReadonlyArray<GeminiPart>) => {
  const chunks = parts.length === 0 ? [[textPart("")]] : parts.map((p) => [p])
  return chunks
    .map((chunk, i) => {
      const last = i === chunks.length - 1
      const response = {
        candidates: [candidateOf(chunk, last)],
        modelVersion: model,
        ...(last ? { usageMetadata: USAGE } : {})
      }
      return `data: ${JSON.stringify(response)}\r\n\r\n`
    })
    .join("")
}

const PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/

const parseBody = (raw: string): GenerateContentBody | undefined => {
  try {
    return JSON.parse(raw) as GenerateContentBody
  } catch {
    return undefined
  }
}

export const serveScriptedGemini = (script: GeminiScript): Promise<ScriptedGeminiServer> =>
  new Promise((resolve, reject) => {
    const requests: Array<GeminiRequest> = []
    const refusals: Array<string> = []
    const server = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const path = req.url ?? ""
        const matched = PATH.exec(path.split("?")[0] ?? "")
        const request: GeminiRequest = {
          method: req.method ?? "",
          path,
          action: matched?.[2] ?? null,
          model: matched?.[1] ?? null,
          headers: req.headers,
          body: parseBody(Buffer.concat(chunks).toString("utf8"))
        }
        requests.push(request)
        const refuse = (status: number, message: string) => {
          refusals.push(`${request.method} ${request.path}: ${message}`)
          // Loudly: an unknown path means the CLI changed what it calls, and the test should say so.
          process.stderr.write(`scripted Gemini server refused ${request.method} ${request.path}: ${message}\n`)
          res
            .writeHead(status, { "content-type": "application/json" })
            .end(JSON.stringify({ error: { code: status, message, status: "NOT_FOUND" } }))
        }
        if (request.method !== "POST" || request.action === null) return refuse(404, "not scripted")
        if (request.body === undefined) return refuse(400, "the body is not JSON")
        if (request.action === "countTokens") {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ totalTokens: 10 }))
          return
        }
        let parts: ReadonlyArray<GeminiPart>
        try {
          parts = script(request)
        } catch (e) {
          return refuse(500, `the script threw: ${e instanceof Error ? e.message : String(e)}`)
        }
        const model = request.model ?? "gemini-scripted"
        if (request.action === "generateContent") {
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ candidates: [candidateOf(parts, true)], usageMetadata: USAGE, modelVersion: model }))
          return
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.end(streamEvents(model, parts))
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
