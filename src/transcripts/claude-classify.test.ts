import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import type { RecordDecision, TranscriptClassification } from "./classification.js"
import { classifyClaudeTranscript, makeClaudeClassifier } from "./claude-classify.js"
import { decidedByType, interpret } from "./claude-records.js"
import { readAllRecords } from "./reader.js"

const fixtures = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "claude")
const fixture = (name: string) => NodePath.join(fixtures, name)
const SUBAGENT = "55555555-5555-4555-8555-555555555555/subagents/agent-a1b2c3d4e5f6a7b8.jsonl"

const classify = (path: string) =>
  readAllRecords(path).pipe(
    Effect.map(({ records }) => classifyClaudeTranscript(records)),
    Effect.provide(NodeTranscriptFilesLive)
  )

const at = (c: TranscriptClassification, line: number): RecordDecision => {
  const d = c.decisions.find((x) => x.line === line)
  if (d === undefined) throw new Error(`no decision for line ${line}`)
  return d
}
const labels = (c: TranscriptClassification) => c.decisions.map((d) => `${d.line}:${d.decision}`)
const selected = (c: TranscriptClassification) =>
  c.turns.filter((t) => t.number > 0).map((t) => t.messages.map((m) => `${m.kind}@${m.source.line}`))
const indexedTexts = (c: TranscriptClassification) => c.turns.flatMap((t) => t.messages.map((m) => m.text))

describe("the Claude Code classifier", () => {
  it.effect("a plain session: each real prompt opens a turn, the answer is the turn's last assistant text", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("plain-turn.jsonl"))
      expect(labels(c)).toEqual(["1:metadata", "2:metadata", "3:index", "4:index", "5:index", "6:index", "7:metadata"])
      expect(at(c, 1)).toMatchObject({ record_type: "queue-operation", reason: "session bookkeeping", turn: 0 })
      expect(selected(c)).toEqual([
        ["request@3", "final_answer@4"],
        ["request@5", "final_answer@6"]
      ])
      const turns = c.turns.filter((t) => t.number > 0)
      expect(turns.map((t) => [t.grouping, t.first_line, t.last_line, t.flags])).toEqual([
        ["user_prompt", 3, 4, []],
        ["user_prompt", 5, 7, []]
      ])
      expect(c.session).toEqual({
        id: "11111111-1111-4111-8111-111111111111",
        cwd: "/home/user/project",
        cli_version: "2.1.332",
        originator: null,
        started_at: "2026-03-01T10:00:00.000Z",
        forked_from_id: null,
        subagent: null,
        parent_history_from_line: null,
        parent_session_id: null
      })
      expect(c.totals).toMatchObject({ records: 7, turns: 2, parse_errors: 0, unknown_types: {} })
      expect(c.totals.by_decision.unclassified).toBe(0)
    })
  )

  it.effect("selected messages carry the exact text, line and byte range of their record", () =>
    Effect.gen(function* () {
      for (const name of ["plain-turn.jsonl", "tool-use.jsonl", "meta-and-commands.jsonl", "malformed-lines.jsonl"]) {
        const path = fixture(name)
        const bytes = Fs.readFileSync(path)
        const lines = bytes.toString("utf8").split("\n")
        const c = yield* classify(path)
        for (const turn of c.turns) {
          for (const m of turn.messages) {
            const raw = bytes.subarray(m.source.byte_start, m.source.byte_end).toString("utf8")
            expect(raw).toBe(lines[m.source.line - 1])
            expect(raw).toContain(JSON.stringify(m.text).slice(1, -1))
            expect(m.timestamp).toBe(JSON.parse(raw).timestamp)
          }
        }
      }
    })
  )

  it.effect("tool calls and results are excluded; assistant text before a tool call is commentary", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("tool-use.jsonl"))
      expect(selected(c)).toEqual([["request@1", "commentary@2", "final_answer@7"]])
      for (const line of [3, 5]) expect(at(c, line)).toMatchObject({ decision: "excluded", reason: "tool call" })
      for (const line of [4, 6]) expect(at(c, line)).toMatchObject({ decision: "excluded", reason: "tool result" })
      expect(indexedTexts(c).join("\n")).not.toContain("expected 3, received 2")
    })
  )

  it.effect("thinking and redacted thinking are excluded as reasoning", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("thinking.jsonl"))
      expect(at(c, 2)).toMatchObject({ record_type: "assistant/thinking", decision: "excluded", reason: "reasoning" })
      expect(at(c, 3)).toMatchObject({ record_type: "assistant/redacted_thinking", decision: "excluded" })
      expect(selected(c)).toEqual([["request@1", "final_answer@4"]])
      expect(indexedTexts(c).join("\n")).not.toContain("Locale changes the rendered output")
    })
  )

  it.effect("a sub-agent's conversation inside its parent's file is the parent's tool traffic", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("sidechain-in-parent.jsonl"))
      for (const line of [3, 4]) {
        expect(at(c, line)).toMatchObject({
          decision: "excluded",
          reason: "sub-agent conversation inside its parent's file (tool traffic)"
        })
      }
      expect(selected(c)).toEqual([["request@1", "final_answer@6"]])
      expect(c.session).toMatchObject({ id: "44444444-4444-4444-8444-444444444444", subagent: null })
    })
  )

  it.effect("a sub-agent's own file is its own session, linked to the parent that spawned it", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture(SUBAGENT))
      expect(c.session).toMatchObject({
        id: "55555555-5555-4555-8555-555555555555/agent-a1b2c3d4e5f6a7b8",
        subagent: "sidechain",
        parent_session_id: "55555555-5555-4555-8555-555555555555"
      })
      expect(at(c, 1)).toMatchObject({
        decision: "index",
        kind: "request",
        reason: "task prompt from the parent session (sidechain sub-agent)"
      })
      expect(selected(c)).toEqual([["request@1", "final_answer@4"]])
      // The parent keeps its own id, so the two files never claim one session.
      const parent = yield* classify(fixture("subagent-parent.jsonl"))
      expect(parent.session).toMatchObject({ id: "55555555-5555-4555-8555-555555555555", subagent: null })
      expect(parent.session?.id).not.toBe(c.session?.id)
    })
  )

  it.effect("compaction: the summary is model-written context, the boundary is metadata, turns go on", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("compaction.jsonl"))
      expect(at(c, 3)).toMatchObject({ record_type: "system/compact_boundary", decision: "metadata" })
      expect(at(c, 4)).toMatchObject({ decision: "context_only", reason: "compaction summary written by the model" })
      expect(at(c, 5)).toMatchObject({ record_type: "summary", decision: "context_only" })
      expect(selected(c)).toEqual([
        ["request@1", "final_answer@2"],
        ["request@6", "final_answer@7"]
      ])
    })
  )

  it.effect("meta messages, slash and shell commands, reminders and interruptions are never requests", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("meta-and-commands.jsonl"))
      expect(c.decisions.map((d) => [d.line, d.decision, d.reason])).toEqual([
        [1, "context_only", "meta message written by Claude Code (isMeta)"],
        [2, "context_only", "slash command"],
        [3, "excluded", "output of a local command"],
        [4, "context_only", "shell command typed by the user"],
        [5, "excluded", "output of a shell command"],
        [6, "context_only", "injected context: system reminder"],
        [7, "index", "request (left out injected context: system reminder)"],
        [8, "index", "final answer (last assistant message, no phase)"],
        [9, "metadata", "interruption marker"],
        [10, "excluded", "synthetic message written by Claude Code"]
      ])
      // A prompt mixing a reminder with the person's words keeps only the words.
      expect(at(c, 7).message?.text).toBe("Why does the build warn about a circular import?")
      expect(c.totals.turns).toBe(1)
      for (const text of indexedTexts(c)) expect(text.trimStart().startsWith("<")).toBe(false)
    })
  )

  it.effect("API request records and attachments (blctx's own recall among them) are never indexed", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("api-requests-and-attachments.jsonl"))
      for (const line of [9, 10, 11]) {
        expect(at(c, line)).toMatchObject({
          decision: "excluded",
          reason: "API request record (a copy of the model's input)"
        })
      }
      for (const line of [4, 5, 6, 7]) expect(at(c, line).decision).toBe("context_only")
      expect(at(c, 8)).toMatchObject({ record_type: "attachment/hook_additional_context", decision: "context_only" })
      expect(at(c, 16)).toMatchObject({ record_type: "cost-state", decision: "excluded" })
      expect(selected(c)).toEqual([["request@3", "final_answer@13"]])
      expect(indexedTexts(c)).toEqual(["What is the deploy command?", "Run make ship-it from the repository root."])
      expect(c.totals.by_decision.unclassified).toBe(0)
    })
  )

  it.effect("malformed lines and unknown shapes are unclassified and counted, never fatal", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("malformed-lines.jsonl"))
      expect(c.decisions.map((d) => [d.line, d.decision, d.reason])).toEqual([
        [1, "index", "request"],
        [2, "unclassified", "unreadable line: invalid_json"],
        [3, "unclassified", "unreadable line: not_a_record"],
        [4, "unclassified", "record type future-record is not interpreted"],
        [5, "unclassified", "user record without a message content"],
        [6, "index", "final answer (last assistant message, no phase)"],
        [7, "unclassified", "unreadable line: truncated_line"]
      ])
      expect(c.totals).toMatchObject({
        parse_errors: 3,
        unknown_types: { "future-record": 1 },
        unknown_fields: {}
      })
      expect(c.totals.by_decision.unclassified).toBe(5)
      expect(c.unreadable_lines.map((u) => u.line)).toEqual([2, 3, 7])
    })
  )

  it.effect("the importer's lean classifier gives the same turns, session and totals", () =>
    Effect.gen(function* () {
      const names = Fs.readdirSync(fixtures).filter((n) => n.endsWith(".jsonl"))
      for (const name of [...names, SUBAGENT]) {
        const { records } = yield* readAllRecords(fixture(name)).pipe(Effect.provide(NodeTranscriptFilesLive))
        const full = classifyClaudeTranscript(records)
        const lean = makeClaudeClassifier({ decisions: false })
        for (const r of records) lean.push(r)
        const { decisions: _, ...summary } = full
        expect(lean.finish()).toEqual(summary)
      }
    })
  )

  it("decides records by their type alone only where nothing else in them matters", () => {
    for (const type of ["api-request", "api-request-blob", "api-request-shape", "attachment", "cost-state"]) {
      expect(decidedByType(type, null)).toBe(true)
      // What the importer hands on for such a line: its keys, values left out.
      const skimmed = interpret({ type, attachment: null, message: null, sessionId: null })
      expect(skimmed._tag).toBe("Fixed")
    }
    for (const type of ["user", "assistant", "summary", "system"]) expect(decidedByType(type, null)).toBe(false)
  })

  it("never throws on odd shapes", () => {
    const odd: ReadonlyArray<Record<string, unknown> & { type: string }> = [
      { type: "user", message: { content: 5 } },
      { type: "user", message: { content: [null, 3, { type: 7 }] } },
      { type: "assistant", message: { content: [{ type: "text", text: 5 }] } },
      { type: "assistant", message: { content: [{ type: "brand_new_block" }] } },
      { type: "attachment", attachment: "x" },
      { type: "system" },
      { type: "summary", summary: 3 }
    ]
    for (const entry of odd) expect(() => interpret(entry)).not.toThrow()
    expect(interpret({ type: "assistant", message: { content: [{ type: "brand_new_block" }] } })).toMatchObject({
      decision: "unclassified"
    })
  })
})

describe("reference Claude Code transcript (opt-in: runs only when BLCTX_REFERENCE_TRANSCRIPTS is set)", () => {
  const root = process.env.BLCTX_REFERENCE_TRANSCRIPTS
  // Opt-in: set BLCTX_REFERENCE_TRANSCRIPTS to the folder of real transcripts (its claude/ folder is read).
  it.skipIf(!root)("real-session-2.0.28.jsonl: labels every record, finds both prompts and answers", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const path = NodePath.join(root ?? "", "claude", "real-session-2.0.28.jsonl")
        const lines = Fs.readFileSync(path, "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "").length
        const c = yield* classify(path)
        expect(c.decisions).toHaveLength(lines)
        expect(c.totals.parse_errors).toBe(0)
        expect(c.totals.by_decision.unclassified).toBe(0)
        expect(selected(c).map((t) => t.map((m) => m.split("@")[0]))).toEqual([
          ["request", "commentary", "final_answer"],
          ["request", "final_answer"]
        ])
        const indexed = c.decisions.filter((d) => d.decision === "index")
        expect(indexed.filter((d) => d.kind === "request").map((d) => d.message?.text.slice(0, 20))).toEqual([
          "add myapp directory ",
          "cd to myapp and run "
        ])
        for (const d of indexed) expect(d.message?.text.trimStart().startsWith("<")).toBe(false)
        expect(c.session).toMatchObject({ id: "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9", cli_version: "2.0.28" })
      })
    )
  )
})
