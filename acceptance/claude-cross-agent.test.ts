import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled, waitFor } from "./support/daemon-harness.js"
import { type McpSession, mcpArgs, startMcp } from "./support/mcp-client.js"
import { claudeHomeOf, requireClaude, runClaude } from "./support/real-claude.js"
import {
  type AnthropicRequest,
  offersTools,
  type ScriptedAnthropicServer,
  serveScriptedAnthropic,
  textAnswer,
  toolUseAnswer
} from "./support/scripted-anthropic-server.js"

/**
 * One memory across agents, end to end with real Claude Code (test-tools/) against a scripted
 * loopback Anthropic API: blctx installed for Claude Code (its MCP server and hooks, through the
 * CLI) answers the model's first move, a call to blctx's `search`, with a citation from Codex
 * history indexed earlier; after the turn the daemon has indexed the new Claude Code transcript
 * with nobody running `blctx index`, and the MCP server Codex launches finds it.
 */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")

const SEARCH_TOOL = "mcp__base-layer-context__search"
const PROMPT = "What did we decide about deploying the shop API? Check blctx first."
const QUERY = "blue-green rollout load balancer"
/**
 * What the model adds in the words the answer may have used (decision 0029): an array Claude Code
 * passes through. Words of the question's own turn, so the answer's one result stays the same.
 */
const REPHRASINGS = ["blue-green rollout"]
const ANSWER = "From Codex history: blue-green behind the load balancer; capybara-beacon-5 marks this turn."
const ANSWER_QUERY = "capybara-beacon-5"

let home: DaemonHome | undefined
let model: ScriptedAnthropicServer | undefined
let mcp: McpSession | undefined
afterEach(async () => {
  await mcp?.close()
  mcp = undefined
  await model?.close()
  model = undefined
  home?.dispose()
  home = undefined
})

interface ToolResultBlock {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content?: unknown
}

/** The tool results a request sends back to the model. */
const toolResults = (request: AnthropicRequest): ReadonlyArray<ToolResultBlock> =>
  (request.body?.messages ?? []).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as ReadonlyArray<{ type?: string }>).filter((b): b is ToolResultBlock => b.type === "tool_result")
      : []
  )

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((b: { text?: unknown }) => (typeof b.text === "string" ? b.text : "")).join("\n")
      : ""

interface Hit {
  readonly text: string
  readonly agent: string | null
  readonly source_type: string
  readonly source: { readonly path?: string; readonly agent?: string }
}

const hitsOf = (result: CallToolResult) =>
  ((result.structuredContent as { results?: ReadonlyArray<Hit> } | undefined)?.results ?? []) as ReadonlyArray<Hit>

const reportOf = (stdout: string) =>
  JSON.parse(stdout) as { ready: boolean; checks: ReadonlyArray<{ id: string; status: string; detail: string }> }

describe("one memory across Codex and Claude Code", () => {
  it(
    "Claude Code's search call cites Codex history, and its own new turn is found from the Codex side",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      const base = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
      expect(base.code, base.stdout + base.stderr).toBe(0)

      // A decision made in Codex, indexed.
      const codexDir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
      Fs.mkdirSync(codexDir, { recursive: true })
      const codexFile = NodePath.join(codexDir, "rollout-2026-02-02T09-00-00-session-1.jsonl")
      Fs.copyFileSync(NodePath.join(history, "session-1.jsonl"), codexFile)
      const index = await h.blctx(["index", codexFile, "--wait"])
      expect(index.code, index.stdout + index.stderr).toBe(0)

      // blctx for Claude Code, through its CLI: the MCP server (checked connected by `claude mcp get`)
      // and the hooks.
      Fs.mkdirSync(claudeHomeOf(h), { recursive: true, mode: 0o700 })
      const withClaude = { env: { BLCTX_CLAUDE_BIN: requireClaude() } }
      const mcpStep = await h.blctx(["install", "claude", "--step", "claude_mcp", "--json"], withClaude)
      expect(mcpStep.code, mcpStep.stdout + mcpStep.stderr).toBe(0)
      expect(reportOf(mcpStep.stdout).checks.find((c) => c.id === "claude_mcp")?.status).toBe("passed")
      const hooksStep = await h.blctx(["install", "claude", "--step", "claude_hooks", "--hooks", "--json"], withClaude)
      expect(hooksStep.code, hooksStep.stdout + hooksStep.stderr).toBe(0)

      // The model's first move in the turn is a call to blctx's search; once the result is back,
      // it answers.
      const server = await serveScriptedAnthropic((request) => {
        if (!offersTools(request)) return [textAnswer("Shop API deploy")]
        if (toolResults(request).length > 0) return [textAnswer(ANSWER)]
        return [toolUseAnswer("toolu_blctx_search_1", SEARCH_TOOL, { query: QUERY, rephrasings: REPHRASINGS })]
      })
      model = server
      const project = NodePath.join(h.home, "project")
      Fs.mkdirSync(project)
      const run = await runClaude(h, server.baseUrl, ["-p", PROMPT, "--allowedTools", SEARCH_TOOL], project, {
        ENABLE_TOOL_SEARCH: "false"
      })
      expect(run.timedOut, `claude -p did not finish: ${run.stderr}`).toBe(false)
      expect(run.code, run.stdout + run.stderr).toBe(0)
      expect(run.stdout).toContain(ANSWER)

      // Claude Code offered blctx's search, called it, and the result it sent back to the model
      // cites the Codex file, line and bytes the decision was said at.
      const offered = server.requests.find((r) => (r.body?.tools ?? []).some((t) => t.name === SEARCH_TOOL))
      expect(
        offered,
        `blctx's search was not offered: ${JSON.stringify(server.requests.map((r) => r.body?.tools?.map((t) => t.name)))}`
      ).toBeDefined()
      // The schema Claude Code offered the model holds the rephrasings, bounded as the request is.
      const offeredSearch = offered?.body?.tools?.find((t) => t.name === SEARCH_TOOL) as
        | { input_schema?: { properties?: Record<string, unknown> } }
        | undefined
      expect(offeredSearch?.input_schema?.properties?.rephrasings).toMatchObject({ type: "array", maxItems: 3 })
      const answered = server.requests.flatMap(toolResults).find((b) => b.tool_use_id === "toolu_blctx_search_1")
      expect(answered, "no tool result for blctx's search reached the model").toBeDefined()
      const cited = textOf(answered?.content)
      expect(cited).toContain("blue-green rollout")
      expect(cited).toContain(codexFile)
      expect(cited).toContain("codex_transcript")
      // Claude Code hands the model the structured content (its excerpts escaped in place), not the
      // framed text block: both must keep history from passing for anything but data.
      expect(JSON.parse(cited)).toMatchObject({ results: [{ source_type: "codex_transcript" }] })

      // The daemon indexes Claude Code's new transcript (the hooks registered it): the MCP server
      // Codex launches finds the turn's answer, cited to that file, without blctx index.
      const claudeFiles = Fs.readdirSync(NodePath.join(claudeHomeOf(h), "projects"), { recursive: true })
        .map(String)
        .filter((p) => p.endsWith(".jsonl"))
      expect(claudeFiles).toHaveLength(1)
      const claudeFile = NodePath.join(claudeHomeOf(h), "projects", claudeFiles[0] as string)
      const session = await startMcp({
        args: mcpArgs(h),
        env: { HOME: h.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
        cwd: h.home
      })
      mcp = session
      const found = await waitFor(
        "Claude Code's answer to be searchable over MCP",
        async () => {
          const hits = hitsOf(await session.call("search", { query: ANSWER_QUERY }))
          const hit = hits.find((r) => r.text.includes(ANSWER_QUERY))
          return hit === undefined ? undefined : hit
        },
        scaled(60_000)
      )
      expect(found.agent).toBe("claude")
      expect(found.source_type).toBe("claude_transcript")
      expect(found.source.path).toBe(claudeFile)
      // The agent filter narrows: Codex's history alone does not hold it; Claude Code's does.
      const codexOnly = hitsOf(await session.call("search", { query: ANSWER_QUERY, filters: { agent: "codex" } }))
      expect(codexOnly.filter((r) => r.text.includes(ANSWER_QUERY))).toEqual([])
      const claudeOnly = hitsOf(await session.call("search", { query: ANSWER_QUERY, filters: { agent: "claude" } }))
      expect(claudeOnly.some((r) => r.text.includes(ANSWER_QUERY))).toBe(true)
    },
    scaled(300_000)
  )
})
