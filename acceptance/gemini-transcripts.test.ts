import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import { parseJson } from "./support/isolated-home.js"
import { geminiOutput, geminiSessionFiles, geminiTurn, writeOfflineSettings } from "./support/real-gemini.js"
import {
  functionCallPart,
  offersTools,
  type ScriptedGeminiServer,
  serveScriptedGemini,
  textPart
} from "./support/scripted-gemini-server.js"

/**
 * Gemini CLI's sessions in the same index as Codex's and Claude Code's, end to end with the real
 * Gemini CLI 0.61 (test-tools/) run headless against a scripted loopback Gemini API: a real turn
 * (a tool call, then the answer) writes its session file, `blctx index` reads it, and search
 * finds the answer with a citation into that file; `--agent` filters across all three agents.
 * One home for the file: every test after the set-up only reads.
 */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const fixtures = NodePath.join(root, "fixtures")

const PROMPT = "Which key should the invoice cache use? Check the notes first."
const NOTES = "The invoice cache was keyed by user id until the tenant migration."
const ANSWER = "Decided in Gemini CLI: the invoice cache is keyed by tenant id (okapi-lantern-7)."
const GEMINI_TOKEN = "okapi-lantern-7"
/** Said in Codex history (fixtures/history/session-1.jsonl). */
const CODEX_QUERY = "blue-green rollout load balancer"
/** Said in Claude Code history (fixtures/claude/plain-turn.jsonl). */
const CLAUDE_QUERY = "preview server port 4173"

interface Hit {
  readonly text: string
  readonly agent: string | null
  readonly source_type: string
  readonly session_id: string
  readonly source: {
    readonly kind: string
    readonly agent?: string
    readonly path?: string
    readonly line?: number
    readonly byte_start?: number
    readonly byte_end?: number
  }
}

let h: DaemonHome
let model: ScriptedGeminiServer
let geminiFile: string
let sessionId: string | undefined

const search = async (query: string, ...filters: ReadonlyArray<string>) => {
  const run = await h.blctx(["search", query, ...filters, "--limit", "20"])
  expect(run.code, `${query} ${filters.join(" ")}: ${run.stderr}`).toBe(0)
  return parseJson<{ results: ReadonlyArray<Hit> }>(run).results
}
const agentsOf = (hits: ReadonlyArray<Hit>) => [...new Set(hits.map((r) => r.agent))].sort()

beforeAll(async () => {
  h = makeDaemonHome("detached")
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)

  // History of the other two agents, filed where they file it.
  const codexFile = NodePath.join(h.codexHome, "sessions", "2026", "02", "02", "rollout-2026-02-02T09-00-00-s1.jsonl")
  Fs.mkdirSync(NodePath.dirname(codexFile), { recursive: true })
  Fs.copyFileSync(NodePath.join(fixtures, "history", "session-1.jsonl"), codexFile)
  const claudeFile = NodePath.join(
    h.home,
    ".claude",
    "projects",
    "-home-dev-shop",
    "11111111-1111-4111-8111-111111111111.jsonl"
  )
  Fs.mkdirSync(NodePath.dirname(claudeFile), { recursive: true })
  Fs.copyFileSync(NodePath.join(fixtures, "claude", "plain-turn.jsonl"), claudeFile)

  // A real Gemini CLI turn: the model reads the notes, then answers.
  writeOfflineSettings(h)
  const project = NodePath.join(h.home, "invoices")
  Fs.mkdirSync(project)
  const notes = NodePath.join(project, "notes.txt")
  Fs.writeFileSync(notes, `${NOTES}\n`)
  model = await serveScriptedGemini((request) => {
    if (!offersTools(request)) return [textPart("Invoice cache key")]
    const last = request.body?.contents?.at(-1)?.parts ?? []
    if (last.some((p) => p.functionResponse !== undefined)) return [textPart(ANSWER)]
    return [textPart("Let me read the notes."), functionCallPart("read_file", { file_path: notes })]
  })
  const run = await geminiTurn(h, model.baseUrl, PROMPT, { cwd: project })
  expect(run.timedOut, `gemini -p did not finish: ${run.stderr}`).toBe(false)
  expect(run.code, run.stdout + run.stderr).toBe(0)
  const out = geminiOutput(run)
  expect(out.response).toBe(ANSWER)
  sessionId = out.session_id
  expect(model.refusals).toEqual([])
  const files = geminiSessionFiles(h)
  expect(files).toHaveLength(1)
  geminiFile = files[0] ?? ""

  // One import of every agent's home, as a person runs it.
  const indexed = await h.blctx(["index", "--wait"])
  expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0)
}, scaled(300_000))

afterAll(async () => {
  await model?.close()
  h?.dispose()
})

describe("Gemini CLI sessions, written by the real CLI, in the one index", () => {
  it("explore reads the session: the prompt and the answers indexed; the tool call, its result and the bookkeeping not", async () => {
    const run = await h.blctx(["explore", geminiFile, "--view", "preview", "--details", "--limit", "100", "--json"])
    expect(run.code, run.stderr).toBe(0)
    const preview = parseJson<{
      format: string
      agent: string
      session: { id: string; cwd: string }
      turns: ReadonlyArray<{
        messages: ReadonlyArray<{ kind: string; text: string }>
        decisions?: ReadonlyArray<{ record_type: string; decision: string; reason: string }>
      }>
    }>(run)
    expect([preview.format, preview.agent]).toEqual(["gemini", "gemini"])
    expect(preview.session).toMatchObject({ id: sessionId, cwd: NodePath.join(h.home, "invoices") })
    expect(preview.turns.flatMap((t) => t.messages.map((m) => [m.kind, m.text]))).toEqual([
      ["request", PROMPT],
      ["commentary", "Let me read the notes."],
      ["final_answer", ANSWER]
    ])
    const decisions = preview.turns.flatMap((t) => t.decisions ?? [])
    expect(decisions.find((d) => d.record_type === "user/tool_output")).toMatchObject({
      decision: "excluded",
      reason: "tool result"
    })
    expect(decisions.find((d) => d.record_type === "$header")).toMatchObject({ decision: "metadata" })
    expect(decisions.filter((d) => d.decision === "unclassified")).toEqual([])
    // The text view says why, record by record.
    const text = await h.blctx(["explore", geminiFile, "--view", "preview", "--details"])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/metadata +\$header +session header/)
    expect(text.stdout).toMatch(/excluded +user\/tool_output +tool result/)
    expect(text.stdout).toMatch(/duplicate +gemini\/text +same assistant message as line \d+/)
  })

  it("search --agent gemini finds the answer, cited by line and bytes into the real session file", async () => {
    const hits = await search(GEMINI_TOKEN, "--agent", "gemini")
    const hit = hits.find((r) => r.text.includes(GEMINI_TOKEN))
    expect(hit, JSON.stringify(hits)).toBeDefined()
    expect([hit?.agent, hit?.source_type, hit?.session_id]).toEqual(["gemini", "gemini_transcript", sessionId])
    expect(hit?.source).toMatchObject({ kind: "transcript_span", agent: "gemini", path: geminiFile })
    const bytes = Fs.readFileSync(geminiFile)
    const line = bytes.toString("utf8").split("\n")[(hit?.source.line ?? 0) - 1]
    expect(bytes.subarray(hit?.source.byte_start ?? 0, hit?.source.byte_end ?? 0).toString("utf8")).toBe(line)
    expect(JSON.parse(line ?? "{}")).toMatchObject({ type: "gemini", content: ANSWER })
    // What the tool returned was read by the model, never indexed as Gemini's own words.
    expect((await search("tenant migration", "--agent", "gemini")).filter((r) => r.text.includes(NOTES))).toEqual([])
  })

  it("one index across three agents: each agent's decision is found unfiltered, and --agent keeps exactly its own", async () => {
    const [all, asGemini, asCodex, asClaude, codexAll, codexGemini, codexCodex, claudeClaude, claudeGemini] =
      await Promise.all([
        search(GEMINI_TOKEN),
        search(GEMINI_TOKEN, "--agent", "gemini"),
        search(GEMINI_TOKEN, "--agent", "codex"),
        search(GEMINI_TOKEN, "--agent", "claude"),
        search(CODEX_QUERY),
        search(CODEX_QUERY, "--agent", "gemini"),
        search(CODEX_QUERY, "--agent", "codex"),
        search(CLAUDE_QUERY, "--agent", "claude"),
        search(CLAUDE_QUERY, "--agent", "gemini")
      ])
    // Gemini's decision, from the other agents' side: found unfiltered, not under their names.
    expect(all.some((r) => r.agent === "gemini" && r.text.includes(GEMINI_TOKEN))).toBe(true)
    expect(asGemini.some((r) => r.text.includes(GEMINI_TOKEN))).toBe(true)
    expect(asCodex.filter((r) => r.text.includes(GEMINI_TOKEN))).toEqual([])
    expect(asClaude.filter((r) => r.text.includes(GEMINI_TOKEN))).toEqual([])
    // Codex's decision, as a question asked in Gemini would find it: unfiltered, and only as Codex's.
    expect(codexAll.some((r) => r.agent === "codex" && r.text.includes("blue-green"))).toBe(true)
    expect(codexCodex.some((r) => r.agent === "codex" && r.text.includes("blue-green"))).toBe(true)
    expect(agentsOf(codexGemini).filter((a) => a !== null && a !== "gemini")).toEqual([])
    expect(codexGemini.some((r) => r.text.includes("blue-green"))).toBe(false)
    // Claude Code's, likewise.
    expect(claudeClaude.some((r) => r.agent === "claude" && r.text.includes("4173"))).toBe(true)
    expect(claudeGemini.some((r) => r.text.includes("4173"))).toBe(false)
  })
})
