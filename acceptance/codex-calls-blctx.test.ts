import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import type { RunResult } from "./support/isolated-home.js"
import { mcpArgs, mcpEntry } from "./support/mcp-client.js"
import { KEY, pathWithCodex, runCodex, writeCodexConfig } from "./support/real-codex.js"
import {
  assistantMessage,
  callOutput,
  customToolCall,
  functionCall,
  type ModelRequest,
  messageTexts,
  type OutputItem,
  offeredNamespaces,
  requestKind,
  type Script,
  type ScriptedModelServer,
  serveScriptedModel
} from "./support/scripted-model-server.js"

/**
 * Real Codex (the `@openai/codex` dev dependency) runs whole turns offline against a scripted
 * loopback model and calls blctx's MCP server, registered the way an installation registers it,
 * over a daemon holding indexed history. What Codex 0.171 sends and records is described in
 * support/scripted-model-server.ts and where each assertion is made.
 */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")
const SERVER = "base-layer-context"
/** Codex's namespace for the server's tools: `mcp__` and the server name with `-` as `_`. */
const NAMESPACE = "mcp__base_layer_context"
const PROMPT = "What did we decide about deploying the shop API? Look it up in my history."
const QUERY = "blue-green rollout"
const CALL_ID = "call_blctx_search"
/** The indexed history message the query finds: line 7 of fixtures/history/session-1.jsonl. */
const DECISION =
  "We decided to deploy the shop API with a blue-green rollout behind the load balancer, switching traffic only after the health checks pass."
const DECISION_LINE = 7

let home: DaemonHome | undefined
let model: ScriptedModelServer | undefined
afterEach(async () => {
  await model?.close()
  model = undefined
  home?.dispose()
  home = undefined
})

interface Citation {
  readonly kind: string
  readonly path: string
  readonly line: number
}
interface SearchAnswer {
  readonly results?: ReadonlyArray<{ readonly text: string; readonly source: Citation }>
}

/** The JSON document a tool output carries after Codex's header ("Wall time: ...\nOutput:\n"). */
const jsonIn = (output: string) => output.slice(output.indexOf("{"))

/** The scripted model's answer: the top result's text and citation, read from the tool's output. */
const quoteOf = (output: string) => {
  try {
    const top = (JSON.parse(jsonIn(output)) as SearchAnswer).results?.[0]
    return top === undefined
      ? `blctx found nothing: ${output}`
      : `From your history: "${top.text}" (${top.source.path}:${top.source.line})`
  } catch {
    return `blctx answered something that is not a search result: ${output}`
  }
}

/** The model's side of the turn: call blctx when the prompt arrives, quote it when the output does. */
const turnScript =
  (call: (namespace: string) => OutputItem, prompt = PROMPT): Script =>
  (request) => {
    const output = callOutput(request, CALL_ID)
    if (output !== undefined) return [assistantMessage(quoteOf(output))]
    const blctx = offeredNamespaces(request).find((ns) => ns.name === NAMESPACE)
    if (blctx !== undefined && messageTexts(request, "user").includes(prompt)) return [call(blctx.name)]
    // Anything else Codex may ask a model (a title, a compaction) gets a plain answer, so an extra
    // request shows up in the assertions on the requests rather than derailing the turn.
    return [assistantMessage("nothing is scripted for this request")]
  }

/**
 * A home whose daemon holds one indexed Codex session, whose CODEX_HOME points Codex at a scripted
 * model and registers blctx's MCP server with `blctx install codex --step codex_mcp` (the absolute
 * node and bundle and the installation's arguments).
 */
const codexWithBlctx = async (script: Script, archived: ReadonlyArray<string> = []) => {
  const h = makeDaemonHome("detached")
  home = h
  // The daemon reads date phrases in its own zone: UTC here, whatever the machine's.
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"], { env: { TZ: "UTC" } })
  expect(install.code, install.stdout + install.stderr).toBe(0)

  const dir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
  Fs.mkdirSync(dir, { recursive: true })
  const indexed = NodePath.join(dir, "rollout-2026-02-02T09-00-00-session-1.jsonl")
  Fs.copyFileSync(NodePath.join(history, "session-1.jsonl"), indexed)
  // More sessions, as archived rollouts (so the turn's own rollout stays the one new file in sessions/).
  const archive = NodePath.join(h.codexHome, "archived_sessions")
  Fs.mkdirSync(archive, { recursive: true })
  const more = archived.map((content, i) => {
    const file = NodePath.join(archive, `rollout-2026-01-01T00-00-0${i}-archived-${i}.jsonl`)
    Fs.writeFileSync(file, content)
    return file
  })
  const index = await h.blctx(["index", indexed, ...more, "--wait"])
  expect(index.code, index.stdout + index.stderr).toBe(0)
  expect(JSON.parse(index.stdout).job.state).toBe("completed")

  const server = await serveScriptedModel(script)
  model = server
  writeCodexConfig(h, server.baseUrl)
  // Registered by blctx itself, through the codex CLI it finds on PATH.
  const register = await h.blctx(["install", "codex", "--step", "codex_mcp", "--json"], {
    env: { PATH: pathWithCodex() }
  })
  expect(register.code, register.stdout + register.stderr).toBe(0)
  const registered = await runCodex(h, ["mcp", "get", SERVER, "--json"])
  expect(JSON.parse(registered.stdout).transport.args).toEqual([mcpEntry(), ...mcpArgs(h)])

  const project = NodePath.join(h.home, "project")
  Fs.mkdirSync(project)
  return { h, indexed, server, project }
}

/** `codex exec` of the prompt, as a person runs it: not a git repository, nothing on stdin. */
const runTurn = async (h: DaemonHome, project: string, prompt = PROMPT) => {
  const run = await runCodex(h, ["exec", "--skip-git-repo-check", prompt], project)
  expect(run.timedOut, `codex exec did not finish: ${run.stderr}`).toBe(false)
  expect(run.code, run.stderr).toBe(0)
  expect(run.stderr).not.toContain("unrecognized configuration setting")
  return run
}

interface RolloutRecord {
  readonly type: string
  readonly payload: { readonly type?: string; readonly [key: string]: unknown }
}

/** The rollout Codex wrote for the turn: the one session file under sessions/ that was not indexed. */
const rolloutOf = (h: DaemonHome, indexed: string): ReadonlyArray<RolloutRecord> => {
  const sessions = NodePath.join(h.codexHome, "sessions")
  const files = (Fs.readdirSync(sessions, { recursive: true }) as Array<string>)
    .map((f) => NodePath.join(sessions, f))
    .filter((f) => f.endsWith(".jsonl") && f !== indexed)
  expect(files).toHaveLength(1)
  return Fs.readFileSync(files[0] as string, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as RolloutRecord)
}

const responseItems = (rollout: ReadonlyArray<RolloutRecord>, type: string) =>
  rollout.filter((r) => r.type === "response_item" && r.payload.type === type).map((r) => r.payload)

/** `event_msg` `item_completed` items of a type (`McpToolCall`, `AgentMessage`, ...). */
const completedItems = (rollout: ReadonlyArray<RolloutRecord>, type: string) =>
  rollout
    .filter((r) => r.type === "event_msg" && r.payload.type === "item_completed")
    .map((r) => r.payload.item as { readonly type: string; readonly [key: string]: unknown })
    .filter((item) => item.type === type)

const describeRequest = (request: ModelRequest) =>
  `${requestKind(request)}: ${request.body?.input?.map((i) => i.type).join(",")}`

/**
 * The two requests of the turn and nothing else: the prompt (offering blctx), then the tool's output.
 * Codex 0.171 asks for no title and compacts nothing in a turn this small.
 */
const turnRequests = (server: ScriptedModelServer) => {
  expect(server.refusals).toEqual([])
  expect(server.requests.map(describeRequest)).toHaveLength(2)
  const [first, second] = server.requests as [ModelRequest, ModelRequest]
  expect(first.headers.authorization).toBe(`Bearer ${KEY}`)
  expect(messageTexts(first, "user")).toContain(PROMPT)
  // MCP tools are deferred: the request names blctx's namespace, with the server's instructions,
  // and lists none of its tools.
  expect(offeredNamespaces(first).find((ns) => ns.name === NAMESPACE)).toEqual({
    name: NAMESPACE,
    description: expect.stringContaining("blctx recalls the person's own coding-agent history"),
    deferred: true,
    tools: []
  })
  expect(callOutput(first, CALL_ID)).toBeUndefined()
  return { first, second }
}

/** What Codex records of the MCP call itself, whichever way the model made it. */
const expectMcpCall = (rollout: ReadonlyArray<RolloutRecord>, indexed: string, output: string) => {
  // `codex exec` runs with approval_policy "never": the call below was made without asking
  // because blctx annotates search readOnlyHint, which Codex records with the call.
  expect(rollout.find((r) => r.type === "turn_context")?.payload.approval_policy).toBe("never")
  const calls = completedItems(rollout, "McpToolCall")
  expect(calls, `one MCP call; the model was sent back: ${output.slice(0, 1000)}`).toHaveLength(1)
  const call = calls[0]
  expect(call).toMatchObject({
    server: SERVER,
    tool: "search",
    arguments: { query: QUERY },
    readOnlyHint: true,
    status: "completed"
  })
  const result = call?.result as { readonly isError?: boolean; readonly structuredContent: SearchAnswer }
  expect(result.isError ?? false).toBe(false)
  const top = result.structuredContent.results?.[0]
  expect(top).toMatchObject({
    text: DECISION,
    source_type: "codex_transcript",
    source: { kind: "transcript_span", agent: "codex", path: indexed, line: DECISION_LINE }
  })
  // The citation names the very line of the transcript that holds the message.
  const line = Fs.readFileSync(indexed, "utf8").split("\n")[DECISION_LINE - 1] ?? ""
  expect(JSON.parse(line).payload.message).toBe(DECISION)
  return { call, answer: result.structuredContent }
}

const QUOTE = (indexed: string) => `From your history: "${DECISION}" (${indexed}:${DECISION_LINE})`

/** The turn ends with the scripted quote: on stdout, as the last agent message, in the rollout. */
const expectQuote = (run: RunResult, rollout: ReadonlyArray<RolloutRecord>, indexed: string) => {
  expect(run.stdout.trim()).toBe(QUOTE(indexed))
  expect(completedItems(rollout, "AgentMessage").at(-1)?.content).toEqual([{ type: "Text", text: QUOTE(indexed) }])
  expect(rollout.find((r) => r.payload.type === "task_complete")?.payload.last_agent_message).toBe(QUOTE(indexed))
}

/** The recall issue's own example: a question bounded in time whose other words only name a project. */
const TIME_PROMPT = "What did we do on the billing service last week? Look it up in my history."
const TIME_QUERY = "what did we do on the billing service last week"
/** Last week's one turn in /home/dev/billing-service: it never says "billing" nor "service". */
const PDF_ANSWER = "Invoice PDFs now render from the HTML template with Playwright."

/** Wednesday noon (UTC) of last week: inside "last week" whatever day this week it is. */
const lastWeeksWednesday = () => {
  const day = 86_400_000
  const now = new Date()
  const monday = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - ((now.getUTCDay() + 6) % 7) * day
  return new Date(monday - 7 * day + 2 * day + day / 2)
}

/** A Codex rollout of one turn in `cwd` at `at`: the person's request and the agent's final answer. */
const oneTurnRollout = (turn: { id: string; cwd: string; at: Date; ask: string; answer: string }) => {
  const t = (s: number) => new Date(turn.at.getTime() + s * 1000).toISOString()
  const payloads = [
    [
      "session_meta",
      { id: turn.id, timestamp: t(0), cwd: turn.cwd, originator: "codex_cli_rs", cli_version: "0.171.0" }
    ],
    ["event_msg", { type: "task_started", turn_id: `${turn.id}-t1` }],
    ["event_msg", { type: "user_message", message: turn.ask, images: [] }],
    ["event_msg", { type: "agent_message", message: turn.answer, phase: "final_answer" }],
    ["event_msg", { type: "task_complete", turn_id: `${turn.id}-t1` }]
  ] as const
  return `${payloads.map(([type, payload], i) => JSON.stringify({ timestamp: t(i), type, payload })).join("\n")}\n`
}

/** A Codex rollout of one turn in the billing service, at `at`. */
const billingRollout = (at: Date) =>
  oneTurnRollout({
    id: "0199f000-0000-7000-8000-0000000000b1",
    cwd: "/home/dev/billing-service",
    at,
    ask: "Finance wants invoices as PDFs",
    answer: PDF_ANSWER
  })

/** A paraphrase whose words the answer does not hold: words-only search needs the agent's rephrasing. */
const UNDO_PROMPT = "How do I undo a release that went wrong? Look it up in my history."
const UNDO_QUERY = "how do I undo a release that went wrong"
const ROLLBACK_ANSWER = "Rollback is make rollback SERVICE=billing: it redeploys the previous task definition."
const rollbackRollout = oneTurnRollout({
  id: "0199f000-0000-7000-8000-0000000000c1",
  cwd: "/home/dev/infra",
  at: new Date("2026-01-20T10:00:00Z"),
  ask: "How do we get back to the last good version?",
  answer: ROLLBACK_ANSWER
})

describe("real Codex calls blctx's MCP tools", () => {
  it(
    "calls search in blctx's namespace without asking, records the call, and answers with its citation",
    async () => {
      const script = turnScript((namespace) =>
        // The namespace comes from the request; `search` is blctx's tool name (a deferred
        // namespace does not list its tools).
        functionCall({ callId: CALL_ID, namespace, name: "search", arguments: { query: QUERY } })
      )
      const { h, indexed, server, project } = await codexWithBlctx(script)
      const run = await runTurn(h, project)

      const { second } = turnRequests(server)
      const output = callOutput(second, CALL_ID) ?? ""
      const rollout = rolloutOf(h, indexed)
      const { answer } = expectMcpCall(rollout, indexed, output)
      // The model got the tool's answer as the function call's output: the same JSON, after a
      // header Codex adds.
      expect(output).toMatch(/^Wall time: [\d.]+ seconds\nOutput:\n\{/)
      expect(JSON.parse(jsonIn(output))).toEqual(answer)

      // The rollout keeps the call and its output as response items, next to the McpToolCall item.
      const [call] = responseItems(rollout, "function_call")
      expect(call).toMatchObject({ type: "function_call", namespace: NAMESPACE, name: "search", call_id: CALL_ID })
      expect(JSON.parse(String(call?.arguments))).toEqual({ query: QUERY })
      expect(completedItems(rollout, "McpToolCall")[0]?.id).toBe(CALL_ID)
      expect(responseItems(rollout, "function_call_output")).toEqual([
        expect.objectContaining({ call_id: CALL_ID, output })
      ])
      expectQuote(run, rollout, indexed)
    },
    scaled(180_000)
  )

  it(
    "answers what we did on the billing service last week with that project's turn, which names neither word",
    async () => {
      const script = turnScript(
        (namespace) => functionCall({ callId: CALL_ID, namespace, name: "search", arguments: { query: TIME_QUERY } }),
        TIME_PROMPT
      )
      const { h, indexed, server, project } = await codexWithBlctx(script, [billingRollout(lastWeeksWednesday())])
      const run = await runTurn(h, project, TIME_PROMPT)

      expect(server.refusals).toEqual([])
      const calls = completedItems(rolloutOf(h, indexed), "McpToolCall")
      expect(calls.map((c) => [c.tool, c.status])).toEqual([["search", "completed"]])
      const answer =
        (calls[0]?.result as { structuredContent?: Record<string, unknown> } | undefined)?.structuredContent ?? {}
      // "last week" became a time filter; "billing service", all that is left, names the project,
      // so its turns of that week come first although no word of the question is in them.
      expect(answer).toMatchObject({
        time_filter: { phrase: "last week", applied: true, time_zone: "UTC" },
        project_named: "/home/dev/billing-service"
      })
      // Only that project's turn of last week: its final answer first, then the request.
      const results = (answer.results ?? []) as ReadonlyArray<{ text: string; source: Citation }>
      const archived = NodePath.join(h.codexHome, "archived_sessions", "rollout-2026-01-01T00-00-00-archived-0.jsonl")
      expect(results.map((r) => [r.text, r.source.path, r.source.line])).toEqual([
        [PDF_ANSWER, archived, 4],
        ["Finance wants invoices as PDFs", archived, 3]
      ])
      expect(run.stdout.trim()).toBe(`From your history: "${PDF_ANSWER}" (${archived}:4)`)
    },
    scaled(180_000)
  )

  it(
    "finds the turn a paraphrase misses through the rephrasings the agent adds to its search",
    async () => {
      const call = (namespace: string) =>
        functionCall({
          callId: CALL_ID,
          namespace,
          name: "search",
          arguments: { query: UNDO_QUERY, rephrasings: ["rollback deployment", "revert to previous version"] }
        })
      // Quotes the result about the rollback wherever it ranks: what this test asks is whether it came.
      const script: Script = (request) => {
        const output = callOutput(request, CALL_ID)
        if (output === undefined) return turnScript(call, UNDO_PROMPT)(request)
        const results = (JSON.parse(jsonIn(output)) as SearchAnswer).results ?? []
        const found = results.find((r) => r.text.includes("make rollback"))
        const quote =
          found === undefined
            ? "no rollback in the answer"
            : `"${found.text}" (${found.source.path}:${found.source.line})`
        return [assistantMessage(`From your history: ${quote}`)]
      }
      const { h, indexed, project } = await codexWithBlctx(script, [rollbackRollout])
      const run = await runTurn(h, project, UNDO_PROMPT)

      const calls = completedItems(rolloutOf(h, indexed), "McpToolCall")
      expect(calls.map((c) => [c.tool, c.status])).toEqual([["search", "completed"]])
      const archived = NodePath.join(h.codexHome, "archived_sessions", "rollout-2026-01-01T00-00-00-archived-0.jsonl")
      expect(run.stdout.trim()).toBe(`From your history: "${ROLLBACK_ANSWER}" (${archived}:4)`)
      // The person's words alone do not find it: the rephrasing did.
      const alone = await h.blctx(["search", UNDO_QUERY, "--limit", "50"])
      expect(alone.code, alone.stderr).toBe(0)
      expect(alone.stdout).not.toContain("make rollback")
    },
    scaled(180_000)
  )

  it(
    "is reachable from code mode: exec finds search in ALL_TOOLS and calls it",
    async () => {
      // Codex 0.171's default tool set for its default model is code mode: one `exec` tool running
      // JavaScript, with every deferred MCP tool on `tools` and listed in `ALL_TOOLS`.
      const script = turnScript((namespace) =>
        customToolCall({
          callId: CALL_ID,
          name: "exec",
          input: [
            `const tool = ALL_TOOLS.find(({ name }) => name === ${JSON.stringify(`${namespace}__search`)});`,
            "if (tool === undefined) {",
            "  text(JSON.stringify({ found: false, tools: ALL_TOOLS.map(({ name }) => name) }));",
            "  exit();",
            "}",
            `const result = await tools[tool.name](${JSON.stringify({ query: QUERY })});`,
            "text(JSON.stringify(result.structuredContent ?? result));"
          ].join("\n")
        })
      )
      const { h, indexed, server, project } = await codexWithBlctx(script)
      const run = await runTurn(h, project)

      const { second } = turnRequests(server)
      const output = callOutput(second, CALL_ID) ?? ""
      const rollout = rolloutOf(h, indexed)
      const { call, answer } = expectMcpCall(rollout, indexed, output)
      expect(output).toMatch(/^Script completed\nWall time [\d.]+ seconds\nOutput:\n\{/)
      expect(JSON.parse(jsonIn(output))).toEqual(answer)

      // The exec call and its output are custom tool items; the MCP call made inside it has an id of its own.
      expect(responseItems(rollout, "custom_tool_call")).toEqual([
        expect.objectContaining({ name: "exec", call_id: CALL_ID })
      ])
      expect(String(call?.id)).toMatch(/^exec-/)
      expect(responseItems(rollout, "custom_tool_call_output")).toEqual([expect.objectContaining({ call_id: CALL_ID })])
      expectQuote(run, rollout, indexed)
    },
    scaled(180_000)
  )

  it(
    "offers blctx's tools in the turn's first request while the full server is still loading, and the call made then is answered",
    async () => {
      // Codex sends a turn's first model request without waiting for its MCP servers. The full
      // server's import is held (support/mcp-main-gate.mjs) until that request arrives, so only the
      // front (src/mcp/mcp-front.ts) can have listed the tools the request offers.
      const OPEN = "call_blctx_open_session"
      let gate = ""
      let firstOffered: boolean | undefined
      const script: Script = (request) => {
        const opened = callOutput(request, OPEN)
        if (opened !== undefined) return [assistantMessage(`open_session answered: ${opened}`)]
        if (!messageTexts(request, "user").includes(PROMPT)) return [assistantMessage("nothing is scripted")]
        firstOffered ??= offeredNamespaces(request).some((ns) => ns.name === NAMESPACE)
        Fs.writeFileSync(gate, "open")
        const binding = { binding_key: "5f0e3c1a-2b4d-4c6e-8f10-9a2b3c4d5e6f" }
        return [functionCall({ callId: OPEN, namespace: NAMESPACE, name: "open_session", arguments: binding })]
      }
      const { h, indexed, project } = await codexWithBlctx(script)
      gate = NodePath.join(h.home, "mcp-main-gate")
      const preload = pathToFileURL(NodePath.join(root, "acceptance", "support", "mcp-main-gate.mjs")).href
      Fs.appendFileSync(
        NodePath.join(h.codexHome, "config.toml"),
        `\n[mcp_servers.${SERVER}.env]\nNODE_OPTIONS = "--import=${preload}"\nBLCTX_TEST_MCP_GATE = "${gate}"\n`
      )
      const run = await runTurn(h, project)

      expect(Fs.existsSync(`${gate}.asked`), "the full server's import went through the gate").toBe(true)
      expect(firstOffered).toBe(true)
      const calls = completedItems(rolloutOf(h, indexed), "McpToolCall")
      expect(
        calls.map((c) => [c.tool, c.status]),
        run.stdout
      ).toEqual([["open_session", "completed"]])
      expect((calls[0]?.result as { isError?: boolean } | undefined)?.isError ?? false).toBe(false)
    },
    scaled(180_000)
  )

  it(
    "saves a note with open_session and log_update without asking, and the note is found at once",
    async () => {
      const OPEN = "call_blctx_open_session"
      const LOG = "call_blctx_log_update"
      const NOTE = "Decided with the person: the shop API rollout waits for the zebrafish canary to stay green."
      const script: Script = (request) => {
        if (callOutput(request, LOG) !== undefined) return [assistantMessage("Noted in blctx.")]
        const opened = callOutput(request, OPEN)
        if (opened !== undefined) {
          const answer = JSON.parse(jsonIn(opened)) as { context_session_id?: string; session_id?: string }
          const session = answer.context_session_id ?? answer.session_id ?? "none"
          return [
            functionCall({
              callId: LOG,
              namespace: NAMESPACE,
              name: "log_update",
              arguments: {
                session_id: session,
                update_id: "6b0f6a52-8c1e-4a8e-9d55-2f6f1c1b7e01",
                text: NOTE,
                kind: "decision",
                tags: ["deploy"]
              }
            })
          ]
        }
        if (messageTexts(request, "user").includes(PROMPT)) {
          return [
            functionCall({
              callId: OPEN,
              namespace: NAMESPACE,
              name: "open_session",
              arguments: { binding_key: "0d6c2d1e-5b9a-4f2e-8a51-3c7e9f0a1b22" }
            })
          ]
        }
        return [assistantMessage("nothing is scripted for this request")]
      }
      const { h, indexed, server, project } = await codexWithBlctx(script)
      const run = await runTurn(h, project)
      expect(server.refusals).toEqual([])
      expect(server.requests).toHaveLength(3)

      // Under approval_policy "never" both write tools were called: blctx annotates them
      // non-destructive and closed-world (they only add to its own store).
      const rollout = rolloutOf(h, indexed)
      expect(rollout.find((r) => r.type === "turn_context")?.payload.approval_policy).toBe("never")
      const calls = completedItems(rollout, "McpToolCall")
      expect(
        calls.map((c) => [c.tool, c.status]),
        JSON.stringify(calls.map((c) => c.result))
      ).toEqual([
        ["open_session", "completed"],
        ["log_update", "completed"]
      ])
      for (const c of calls) expect((c.result as { isError?: boolean }).isError ?? false).toBe(false)
      expect(run.stdout.trim()).toBe("Noted in blctx.")

      // The note is in the index at once: found by the CLI, as an authored update.
      const found = await h.blctx(["search", "zebrafish canary", "--json"])
      expect(found.code, found.stderr).toBe(0)
      expect(JSON.parse(found.stdout).results[0]).toMatchObject({ text: NOTE, source_type: "authored_update" })
    },
    scaled(180_000)
  )
})
