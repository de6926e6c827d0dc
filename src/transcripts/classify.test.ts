import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import type { RecordDecision, TranscriptClassification } from "./classification.js"
import { classifyTranscript, makeClassifier } from "./classify.js"
import { decidedByType, interpret } from "./codex-records.js"
import { readAllRecords } from "./reader.js"

const fixtures = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "codex")
const fixture = (name: string) => NodePath.join(fixtures, name)

const classify = (path: string) =>
  readAllRecords(path).pipe(
    Effect.map(({ records }) => classifyTranscript(records)),
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

/** The exact text of a source line, as `sed -n Np` would show it. */
const sourceLine = (path: string, line: number) => Fs.readFileSync(path, "utf8").split("\n")[line - 1]

describe("classifyTranscript", () => {
  it.effect("old format: splits turns at user prompts, dedupes across representations, infers answers", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("old-format-no-turn-ids.jsonl"))
      expect(c.decisions).toHaveLength(22)
      expect(at(c, 1).decision).toBe("metadata")
      expect(at(c, 2)).toMatchObject({ decision: "context_only", reason: "injected context: environment context" })
      expect(at(c, 2).turn).toBe(0)
      expect(at(c, 3)).toMatchObject({ decision: "index", kind: "request", turn: 1 })
      expect(at(c, 4)).toMatchObject({ decision: "duplicate", duplicate_of: { line: 3 } })
      expect(at(c, 6)).toMatchObject({ decision: "excluded", reason: "token counts" })
      expect(at(c, 8)).toMatchObject({ decision: "excluded", reason: "reasoning" })
      expect(at(c, 9)).toMatchObject({ decision: "excluded", reason: "tool call" })
      expect(at(c, 10)).toMatchObject({ decision: "excluded", reason: "tool output" })
      expect(at(c, 12)).toMatchObject({ decision: "duplicate", duplicate_of: { line: 11 } })
      expect(selected(c)).toEqual([
        ["request@3", "final_answer@11"],
        ["request@14", "commentary@17", "final_answer@21"]
      ])
      const turns = c.turns.filter((t) => t.number > 0)
      expect(turns.map((t) => [t.grouping, t.first_line, t.last_line, t.flags])).toEqual([
        ["user_prompt", 3, 13, []],
        ["user_prompt", 14, 22, []]
      ])
      expect(turns[0]?.messages[0]?.duplicates).toEqual([
        { line: 4, byte_start: expect.any(Number), byte_end: expect.any(Number) }
      ])
      expect(c.totals.by_decision).toEqual({
        index: 5,
        context_only: 1,
        excluded: 8,
        duplicate: 5,
        metadata: 3,
        unclassified: 0
      })
      expect(c.session).toMatchObject({ cli_version: "0.66.0", cwd: "/home/dev/project", subagent: null })
    })
  )

  it.effect("selected messages carry the exact text and byte positions of their source line", () =>
    Effect.gen(function* () {
      const path = fixture("old-format-no-turn-ids.jsonl")
      const c = yield* classify(path)
      const bytes = Fs.readFileSync(path)
      for (const turn of c.turns) {
        for (const m of turn.messages) {
          const raw = bytes.subarray(m.source.byte_start, m.source.byte_end).toString("utf8")
          expect(raw).toBe(sourceLine(path, m.source.line))
          expect(raw).toContain(JSON.stringify(m.text).slice(1, -1))
        }
      }
    })
  )

  it.effect("new format: groups by explicit turn id, uses phases, keeps a steering prompt in its turn", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("new-format-turn-ids.jsonl"))
      const turns = c.turns.filter((t) => t.number > 0)
      expect(turns.map((t) => [t.turn_id, t.grouping, t.flags])).toEqual([
        ["0199b000-0000-7000-8000-0000000000a1", "turn_id", []],
        ["0199b000-0000-7000-8000-0000000000a2", "turn_id", []]
      ])
      expect(at(c, 4)).toMatchObject({ decision: "context_only", reason: "developer instructions" })
      expect(at(c, 7)).toMatchObject({ decision: "index", kind: "commentary", reason: "assistant commentary" })
      expect(at(c, 11)).toMatchObject({ decision: "index", kind: "final_answer", reason: "final answer" })
      expect(at(c, 12)).toMatchObject({ decision: "duplicate", duplicate_of: { line: 11 } })
      expect(selected(c)).toEqual([
        ["request@5", "commentary@7", "final_answer@11"],
        ["request@16", "request@18", "final_answer@20"]
      ])
      expect(c.decisions.every((d) => d.turn > 0 || d.line === 1)).toBe(true)
    })
  )

  it.effect("injected AGENTS.md, environment, user instructions and skills are context, never index", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("injected-agents-md.jsonl"))
      expect([3, 4, 5, 6].map((l) => at(c, l).reason)).toEqual([
        "injected context: AGENTS.md instructions",
        "injected context: environment context",
        "injected context: user instructions",
        "injected context: skill instructions"
      ])
      expect([3, 4, 5, 6].every((l) => at(c, l).decision === "context_only")).toBe(true)
      const indexed = c.decisions.filter((d) => d.decision === "index").map((d) => d.message?.text)
      expect(indexed).toEqual([
        "What does AGENTS.md ask me to do before committing?",
        "It asks you to run npm test before committing.",
        "And before pushing?",
        "Nothing more: it only mentions committing."
      ])
      // A message mixing injected context with your text keeps only your text, and says so.
      expect(at(c, 13)).toMatchObject({
        decision: "index",
        kind: "request",
        reason: "request (left out injected context: environment context)"
      })
      expect(at(c, 14)).toMatchObject({ decision: "duplicate", duplicate_of: { line: 13 } })
    })
  )

  it.effect("compaction: the summary is context, the turns around it stay intact", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("compaction.jsonl"))
      expect(at(c, 6)).toMatchObject({ decision: "context_only", reason: "compaction summary written by the model" })
      expect(at(c, 7)).toMatchObject({ decision: "metadata", record_type: "event_msg/context_compacted" })
      expect(selected(c)).toEqual([
        ["request@2", "final_answer@4"],
        ["request@8", "final_answer@10"]
      ])
    })
  )

  it.effect("fork and sub-agent sessions are identified in the session info", () =>
    Effect.gen(function* () {
      const fork = yield* classify(fixture("fork.jsonl"))
      expect(fork.session?.forked_from_id).toBe("0199d000-0000-7000-8000-000000000004")
      expect(fork.session?.id).toBe("0199e000-0000-7000-8000-000000000005")
      expect(fork.session?.parent_history_from_line).toBe(2)
      expect(at(fork, 2)).toMatchObject({
        decision: "metadata",
        reason: "parent session metadata: history copied by the fork starts here"
      })
      expect(selected(fork)).toEqual([
        ["request@3", "final_answer@5"],
        ["request@7", "final_answer@9"]
      ])
      const sub = yield* classify(fixture("subagent.jsonl"))
      expect(sub.session?.subagent).toBe("review")
      expect(at(sub, 2)).toMatchObject({
        decision: "index",
        kind: "request",
        reason: "task prompt from the parent session (review sub-agent)"
      })
      expect(at(sub, 3)).toMatchObject({ decision: "index", kind: "final_answer" })
    })
  )

  it.effect("malformed lines and unknown types are labelled unclassified and counted, never dropped", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("malformed-lines.jsonl"))
      expect(labels(c)).toEqual([
        "1:metadata",
        "2:unclassified",
        "3:unclassified",
        "4:index",
        "5:unclassified",
        "6:index",
        "7:unclassified"
      ])
      expect(at(c, 2).reason).toBe("unreadable line: invalid_json")
      expect(at(c, 3).reason).toBe("unreadable line: not_a_record")
      expect(at(c, 5).reason).toBe("record type hologram is not interpreted")
      expect(at(c, 7).reason).toBe("unreadable line: truncated_line")
      expect(c.totals.parse_errors).toBe(3)
      expect(c.totals.unknown_types).toEqual({ hologram: 1 })
      expect(c.totals.unknown_fields).toEqual({ flavour: 1 })
    })
  )

  it.effect("paginated history: turn items are messages, response items copying them are duplicates", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("paginated-items.jsonl"))
      expect(at(c, 4)).toMatchObject({ decision: "index", kind: "request", record_type: "event_msg/item_completed" })
      expect(at(c, 5)).toMatchObject({ decision: "duplicate", duplicate_of: { line: 4 } })
      expect(at(c, 6)).toMatchObject({ decision: "index", kind: "final_answer" })
      expect(at(c, 7)).toMatchObject({ decision: "duplicate", duplicate_of: { line: 6 } })
      expect(at(c, 8)).toMatchObject({ decision: "excluded", reason: "token counts" })
      expect(at(c, 9)).toMatchObject({ decision: "metadata", reason: "environment state" })
      expect(c.turns.filter((t) => t.number > 0).map((t) => t.turn_id)).toEqual(["turn-p1"])
      expect(c.totals.unknown_fields).toEqual({})
    })
  )

  it.effect("repeated identical messages in one representation are kept; only cross copies are duplicates", () =>
    Effect.gen(function* () {
      const c = yield* classify(fixture("repeated-messages.jsonl"))
      expect(labels(c).slice(1)).toEqual([
        "2:index",
        "3:duplicate",
        "4:index",
        "5:duplicate",
        "6:index",
        "7:duplicate",
        "8:index",
        "9:duplicate",
        "10:index",
        "11:duplicate"
      ])
      expect(at(c, 7).duplicate_of?.line).toBe(6)
      expect(selected(c)).toEqual([
        ["request@2", "commentary@4", "final_answer@6"],
        ["request@8", "final_answer@10"]
      ])
    })
  )

  it("a request written just before its task_started joins that turn", () => {
    const rec = (line: number, entry: Record<string, unknown>) => ({
      kind: "record" as const,
      line,
      byte_start: line * 10,
      byte_end: line * 10 + 5,
      entry: entry as { type: string }
    })
    const c = classifyTranscript([
      rec(1, { type: "event_msg", payload: { type: "user_message", message: "first" } }),
      rec(2, { type: "event_msg", payload: { type: "task_started", turn_id: "t1" } }),
      rec(3, { type: "event_msg", payload: { type: "agent_message", message: "one", phase: "final_answer" } }),
      rec(4, { type: "event_msg", payload: { type: "task_complete", turn_id: "t1" } }),
      rec(5, { type: "event_msg", payload: { type: "user_message", message: "second" } }),
      rec(6, { type: "turn_context", payload: { turn_id: "t2" } }),
      rec(7, { type: "event_msg", payload: { type: "agent_message", message: "two", phase: "final_answer" } })
    ])
    expect(c.turns.filter((t) => t.number > 0).map((t) => [t.turn_id, t.first_line, t.flags])).toEqual([
      ["t1", 1, []],
      ["t2", 5, []]
    ])
  })

  it("turns without a request or an answer are flagged", () => {
    const rec = (line: number, entry: Record<string, unknown>) => ({
      kind: "record" as const,
      line,
      byte_start: line * 10,
      byte_end: line * 10 + 5,
      entry: entry as { type: string }
    })
    const c = classifyTranscript([
      rec(1, { type: "event_msg", payload: { type: "task_started", turn_id: "a" } }),
      rec(2, { type: "event_msg", payload: { type: "user_message", message: "interrupted request" } }),
      rec(3, { type: "event_msg", payload: { type: "turn_aborted", turn_id: "a", reason: "interrupted" } }),
      rec(4, { type: "event_msg", payload: { type: "task_started", turn_id: "b" } }),
      rec(5, { type: "event_msg", payload: { type: "agent_message", message: "answer", phase: "final_answer" } })
    ])
    expect(c.turns.filter((t) => t.number > 0).map((t) => [t.turn_id, t.flags])).toEqual([
      ["a", ["no_answer"]],
      ["b", ["no_request"]]
    ])
  })
})

describe("the Codex record tables", () => {
  it("a record decided by its type alone is interpreted the same whatever else its payload holds", () => {
    const subtypes = [
      ...["function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call"],
      ...["image_generation_call", "function_call_output", "custom_tool_call_output", "tool_search_output"],
      ...["compaction", "context_compaction", "compaction_summary", "reasoning", "ghost_snapshot", "additional_tools"],
      ...["token_count", "agent_reasoning", "agent_reasoning_delta", "exec_command_end", "patch_apply_end"],
      ...["mcp_tool_call_end", "turn_diff", "error", "warning", "stream_error", "message", "user_message"],
      ...["agent_message", "item_completed", "task_started", "task_complete", "turn_aborted", "hologram"]
    ]
    const payloads = (subtype: string | null) => [
      subtype === null ? null : { type: subtype },
      { type: subtype, turn_id: "t9", message: "hello", role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: subtype, item: { type: "UserMessage", content: [] }, phase: "final_answer" },
      { type: subtype, output: "x".repeat(1000) }
    ]
    let decided = 0
    for (const type of [
      "response_item",
      "event_msg",
      "world_state",
      "token_usage_record",
      "turn_context",
      "compacted"
    ]) {
      for (const subtype of [...subtypes, null]) {
        if (!decidedByType(type, subtype)) continue
        decided++
        const [first, ...rest] = payloads(subtype).map((p) => interpret(type, p, subtype))
        for (const other of rest) expect(other).toEqual(first)
        expect(first?._tag).toBe("Fixed")
      }
    }
    expect(decided).toBeGreaterThan(20)
    expect(decidedByType("response_item", "message")).toBe(false)
    expect(decidedByType("event_msg", "task_started")).toBe(false)
    expect(decidedByType("turn_context", null)).toBe(false)
  })
})

describe("the lean classifier (what the importer keeps)", () => {
  const fixtureNames = Fs.readdirSync(fixtures).filter((n) => n.endsWith(".jsonl"))

  it.effect.each(fixtureNames)("%s: the same turns, messages, session and totals as the full one", (name) =>
    Effect.gen(function* () {
      const path = fixture(name)
      const { records } = yield* readAllRecords(path).pipe(Effect.provide(NodeTranscriptFilesLive))
      const full = classifyTranscript(records)
      const lean = makeClassifier({ decisions: false })
      for (const record of records) lean.push(record)
      const summary = lean.finish()
      expect("decisions" in summary).toBe(false)
      const { decisions, ...rest } = full
      expect(summary).toEqual(rest)
      // What the importer takes from decisions, it now finds in the summary.
      for (const turn of summary.turns.filter((t) => t.number > 0)) {
        expect(decisions.find((d) => d.line === turn.first_line)?.byte_start).toBe(turn.first_byte)
        for (const m of turn.messages) {
          expect(m.timestamp).toBe(decisions.find((d) => d.line === m.source.line)?.timestamp)
        }
      }
      const unreadable = decisions.filter((d) => d.record_type === "parse_error")
      expect(summary.unreadable_lines).toEqual(
        unreadable.slice(0, 5).map((d) => ({ line: d.line, reason: d.reason.replace("unreadable line: ", "") }))
      )
    })
  )

  it("names only the first five unreadable lines and counts them all", () => {
    const lean = makeClassifier({ decisions: false })
    for (let line = 1; line <= 40; line++) {
      lean.push({
        kind: "parse_error",
        line,
        byte_start: line * 3,
        byte_end: line * 3 + 2,
        reason: "invalid_json",
        message: "x"
      })
    }
    const summary = lean.finish()
    expect(summary.unreadable_lines.map((u) => u.line)).toEqual([1, 2, 3, 4, 5])
    expect(summary.totals.parse_errors).toBe(40)
    expect(summary.totals.by_decision.unclassified).toBe(40)
  })
})

describe.each(["real-interactive-0.66.jsonl", "review-parent-0.77.jsonl", "review-subagent-0.77.jsonl"])(
  "reference transcript %s (opt-in: runs only when BLCTX_REFERENCE_TRANSCRIPTS is set)",
  (name) => {
    const root = process.env.BLCTX_REFERENCE_TRANSCRIPTS
    // Opt-in: set BLCTX_REFERENCE_TRANSCRIPTS to the folder of real Codex transcripts.
    it.skipIf(!process.env.BLCTX_REFERENCE_TRANSCRIPTS)(
      "labels every record, finds requests and answers, indexes no injected context",
      () =>
        Effect.runPromise(
          Effect.gen(function* () {
            const path = NodePath.join(root ?? "", "codex", name)
            const lines = Fs.readFileSync(path, "utf8")
              .split("\n")
              .filter((l) => l.trim() !== "").length
            const c = yield* classify(path)
            expect(c.decisions).toHaveLength(lines)
            expect(c.totals.parse_errors).toBe(0)
            const indexed = c.decisions.filter((d) => d.decision === "index")
            expect(indexed.some((d) => d.kind === "request")).toBe(true)
            for (const d of indexed) expect(d.message?.text.trimStart().startsWith("<")).toBe(false)
            if (name === "real-interactive-0.66.jsonl") {
              expect(selected(c).map((t) => t.length)).toEqual([2, 2])
              expect(indexed.filter((d) => d.kind === "final_answer").map((d) => d.message?.text.slice(0, 20))).toEqual(
                ["Added simple script ", "Ran the script with "]
              )
            }
          })
        )
    )
  }
)
