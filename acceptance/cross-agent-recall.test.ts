import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { type McpSession, mcpArgs, startMcp, structured, toolErrorOf } from "./support/mcp-client.js"

// Cross-agent recall end to end: search, recent and context span every agent unless `agent`
// narrows them, through the CLI (`--agent`) and the MCP tools (`agent`), and every result names
// its agent and source type. Only Codex transcripts are indexed here (the Claude Code format is
// registered separately); the unit tests in src/retrieval cover rows of both agents.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const history = NodePath.join(root, "fixtures", "history")

let home: DaemonHome | undefined
const sessions: Array<McpSession> = []
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined)
  home?.dispose()
  home = undefined
})

const json = async <A>(h: DaemonHome, args: ReadonlyArray<string>) => {
  const result = await h.blctx(args)
  expect(result.code, `${args.join(" ")}: ${result.stderr}${result.stdout}`).toBe(0)
  return JSON.parse(result.stdout) as A
}

interface Hit {
  readonly context_id: string
  readonly text: string
  readonly agent: string | null
  readonly source_type: string
  readonly source: { readonly kind: string; readonly agent?: string; readonly path?: string }
}
interface Search {
  readonly results: ReadonlyArray<Hit>
}
interface Recent {
  readonly agent: string | null
  readonly turns: ReadonlyArray<{ readonly messages: ReadonlyArray<{ agent: string | null; source_type: string }> }>
}

describe("cross-agent recall", () => {
  it("spans every agent by default, narrows with --agent / agent, and refuses an unknown agent", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const dir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
    Fs.mkdirSync(dir, { recursive: true })
    const file = NodePath.join(dir, "rollout-2026-02-02T09-00-00-session-1.jsonl")
    Fs.copyFileSync(NodePath.join(history, "session-1.jsonl"), file)
    expect((await json<{ job: { state: string } }>(h, ["index", file, "--wait"])).job.state).toBe("completed")

    // A note, logged through MCP in a session no hook bound to an agent: shared by every agent.
    const mcp = await startMcp({
      args: mcpArgs(h),
      env: { HOME: h.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
      cwd: h.home
    })
    sessions.push(mcp)
    const session = structured<{ context_session_id: string }>(
      await mcp.call("open_session", { binding_key: randomUUID(), project: "/home/dev/shop-api" })
    )
    structured(
      await mcp.call("log_update", {
        session_id: session.context_session_id,
        update_id: randomUUID(),
        text: "Decided: the blue-green rollout keeps the old pool warm for an hour.",
        kind: "decision"
      })
    )

    // CLI: every agent by default; each result says its agent, source type and file.
    const all = await json<Search>(h, ["search", "blue-green", "rollout"])
    const transcript = all.results.find((r) => r.source_type === "codex_transcript")
    expect(transcript).toMatchObject({
      agent: "codex",
      source: { kind: "transcript_span", agent: "codex", path: file }
    })
    expect(all.results.find((r) => r.source_type === "authored_update")).toMatchObject({
      agent: null,
      source: { kind: "note_revision" }
    })
    const codex = await json<Search>(h, ["search", "blue-green", "rollout", "--agent", "codex"])
    expect(codex.results.map((r) => r.context_id)).toEqual(all.results.map((r) => r.context_id))
    // Claude's history holds no transcript here: only the shared note is left.
    const claude = await json<Search>(h, ["search", "blue-green", "rollout", "--agent", "claude"])
    expect(claude.results.map((r) => r.source_type)).toEqual(["authored_update"])
    const recent = await json<Recent>(h, ["recent", "--agent", "claude"])
    expect(recent.agent).toBe("claude")
    expect(recent.turns.flatMap((t) => t.messages.map((m) => m.source_type))).toEqual(["authored_update"])
    const recentCodex = await json<Recent>(h, ["recent", "--agent", "codex", "--limit", "200"])
    expect(new Set(recentCodex.turns.flatMap((t) => t.messages.map((m) => m.agent)))).toEqual(new Set(["codex", null]))

    // A misspelt agent is a usage error listing the known ones; context refuses another agent's source.
    const unknown = await h.blctx(["search", "rollout", "--agent", "cursor"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr + unknown.stdout).toMatch(/codex/)
    expect(unknown.stderr + unknown.stdout).toMatch(/claude/)
    const refused = await h.blctx(["context", transcript?.context_id ?? "", "--agent", "claude"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("comes from codex's history, not claude's")
    expect(
      (
        await json<{ messages: ReadonlyArray<{ agent: string }> }>(h, [
          "context",
          transcript?.context_id ?? "",
          "--agent",
          "codex"
        ])
      ).messages.every((m) => m.agent === "codex")
    ).toBe(true)

    // MCP: the same parameter on search, recent and context; an unknown agent is invalid_query.
    const viaMcp = structured<Search>(
      await mcp.call("search", { query: "blue-green rollout", filters: { agent: "claude" } })
    )
    expect(viaMcp.results.map((r) => r.source_type)).toEqual(["authored_update"])
    expect(structured<Recent>(await mcp.call("recent", { agent: "codex" })).agent).toBe("codex")
    for (const [tool, args] of [
      ["search", { query: "rollout", filters: { agent: "aider" } }],
      ["recent", { agent: "Claude" }],
      ["context", { context_id: transcript?.context_id ?? "", agent: "cursor" }]
    ] as const) {
      const error = toolErrorOf(await mcp.call(tool, args))
      expect(error).toMatchObject({ kind: "invalid_query", tool })
      expect(error.message).toMatch(/unknown agent .*: blctx keeps the history of codex, claude or gemini/)
    }
    const other = toolErrorOf(await mcp.call("context", { context_id: transcript?.context_id ?? "", agent: "claude" }))
    expect(other).toMatchObject({ kind: "invalid_query", tool: "context" })
  })
})
