import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { makeDaemonHome } from "./support/daemon-harness.js"
import { type IsolatedHome, makeIsolatedHome, parseJson } from "./support/isolated-home.js"

/** Claude Code transcripts, read by the built CLI: explore shows them, index and search find them. */

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const fixtures = NodePath.join(root, "fixtures", "claude")
const SESSION = "88888888-8888-4888-8888-888888888888"

interface Decision {
  readonly line: number
  readonly record_type: string
  readonly decision: string
}
interface Preview {
  readonly format: string
  readonly agent: string
  readonly turns: ReadonlyArray<{
    readonly number: number
    readonly messages: ReadonlyArray<{
      readonly kind: string
      readonly text: string
      readonly source: { line: number }
    }>
    readonly decisions?: ReadonlyArray<Decision>
  }>
}

let home: IsolatedHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

/** A Claude Code home with the fixture session filed the way Claude Code files it. */
const placeSession = (h: IsolatedHome, fixture: string) => {
  const target = NodePath.join(h.home, ".claude", "projects", "-home-user-project", `${SESSION}.jsonl`)
  Fs.mkdirSync(NodePath.dirname(target), { recursive: true })
  Fs.copyFileSync(NodePath.join(fixtures, fixture), target)
  return target
}

const previewOf = async (h: IsolatedHome, path: string) => {
  const result = await h.blctx(["explore", path, "--view", "preview", "--details", "--limit", "100", "--json"])
  expect(result.code, result.stderr).toBe(0)
  return parseJson<Preview>(result)
}

const indexedDecisions = (p: Preview) => p.turns.flatMap((t) => t.decisions ?? []).filter((d) => d.decision === "index")

describe("Claude Code transcripts", () => {
  it("explore selects the prompt and the answer and indexes no API request, attachment or reminder", async () => {
    const h = makeIsolatedHome()
    home = h
    const preview = await previewOf(h, NodePath.join(fixtures, "api-requests-and-attachments.jsonl"))
    expect([preview.format, preview.agent]).toEqual(["claude", "claude"])
    expect(preview.turns.flatMap((t) => t.messages.map((m) => [m.kind, m.text]))).toEqual([
      ["request", "What is the deploy command?"],
      ["final_answer", "Run make ship-it from the repository root."]
    ])
    const decisions = preview.turns.flatMap((t) => t.decisions ?? [])
    expect(decisions).toHaveLength(16)
    for (const d of decisions) {
      if (d.record_type.startsWith("api-request") || d.record_type.startsWith("attachment")) {
        expect(d.decision, `${d.line} ${d.record_type}`).not.toBe("index")
      }
    }
    expect(indexedDecisions(preview).map((d) => d.record_type)).toEqual(["user/text", "assistant/text"])
    const text = await h.blctx(["explore", NodePath.join(fixtures, "api-requests-and-attachments.jsonl")])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain("  claude (final answer) [line 13")
    expect(text.stdout).not.toContain("blctx recall")
  })

  // Opt-in: set BLCTX_REFERENCE_TRANSCRIPTS to the folder of real transcripts (its claude/ folder is read).
  it.skipIf(!process.env.BLCTX_REFERENCE_TRANSCRIPTS)(
    "explore on the real Claude Code 2.0.28 reference transcript selects its prompts and answers only",
    async () => {
      const h = makeIsolatedHome()
      home = h
      const path = NodePath.join(process.env.BLCTX_REFERENCE_TRANSCRIPTS ?? "", "claude", "real-session-2.0.28.jsonl")
      const preview = await previewOf(h, path)
      expect([preview.format, preview.agent]).toEqual(["claude", "claude"])
      const selected = preview.turns.filter((t) => t.number > 0).map((t) => t.messages.map((m) => m.kind))
      expect(selected).toEqual([
        ["request", "commentary", "final_answer"],
        ["request", "final_answer"]
      ])
      const requests = preview.turns.flatMap((t) => t.messages.filter((m) => m.kind === "request").map((m) => m.text))
      expect(requests).toEqual([
        "add myapp directory and create myapp/hoge.py which shows result of print(1+1).",
        "cd to myapp and run python hoge.py"
      ])
      for (const d of indexedDecisions(preview)) expect(d.record_type).toMatch(/^(user|assistant)\/text$/)
      for (const t of preview.turns) for (const m of t.messages) expect(m.text.trimStart().startsWith("<")).toBe(false)
    }
  )

  it("explore lists Claude Code sessions beside Codex ones, and --agent narrows the list", async () => {
    const h = makeIsolatedHome()
    home = h
    const placed = placeSession(h, "plain-turn.jsonl")
    interface Listing {
      readonly homes: ReadonlyArray<{ readonly format: string; readonly total: number }>
      readonly transcripts: ReadonlyArray<{
        readonly path: string
        readonly agent: string
        readonly session_id: string
      }>
    }
    const all = await h.blctx(["explore", "--json"])
    expect(all.code, all.stderr).toBe(0)
    const listed = parseJson<Listing>(all)
    expect(listed.homes.map((x) => [x.format, x.total])).toEqual([
      ["codex", 0],
      ["claude", 1],
      ["gemini", 0]
    ])
    expect(listed.transcripts).toEqual([
      expect.objectContaining({ path: placed, agent: "claude", session_id: "11111111-1111-4111-8111-111111111111" })
    ])
    const codexOnly = parseJson<Listing>(await h.blctx(["explore", "--agent", "codex", "--json"]))
    expect([codexOnly.homes.map((x) => x.format), codexOnly.transcripts]).toEqual([["codex"], []])
    const claudeOnly = parseJson<Listing>(await h.blctx(["explore", "--agent", "claude", "--json"]))
    expect(claudeOnly.transcripts.map((t) => t.path)).toEqual([placed])
    const refused = await h.blctx(["explore", placed, "--agent", "claude"])
    expect(refused.code).toBe(2)
  })

  it("blctx index of a Claude Code file, then search finds it as a claude_transcript of agent claude", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const file = placeSession(h, "api-requests-and-attachments.jsonl")
    const indexed = await h.blctx(["index", file, "--wait"])
    expect(indexed.code, indexed.stderr + indexed.stdout).toBe(0)
    const job = (JSON.parse(indexed.stdout) as { job: { state: string; counts: Record<string, number> } }).job
    expect(job.state).toBe("completed")
    expect(job.counts.messages_added).toBe(2)

    interface Search {
      readonly results: ReadonlyArray<{
        readonly text: string
        readonly source_type: string
        readonly session_id: string
        readonly source: { readonly kind: string; readonly agent: string; readonly path: string; readonly line: number }
      }>
    }
    const found = await h.blctx(["search", "ship-it"])
    expect(found.code, found.stderr).toBe(0)
    const results = parseJson<Search>(found).results
    expect(results.length).toBeGreaterThan(0)
    for (const r of results) {
      expect(r.source_type).toBe("claude_transcript")
      expect(r.source).toMatchObject({ kind: "transcript_span", agent: "claude", path: file })
      expect(r.session_id).toBe(SESSION)
      // blctx's own recall, injected as hook context, was never indexed.
      expect(r.text).not.toContain("blctx recall")
    }
    expect(results.map((r) => r.source.line)).toEqual([13])
    const injected = parseJson<Search>(await h.blctx(["search", "Environment", "Skills", "recall"]))
    expect(injected.results).toEqual([])
  })
})
