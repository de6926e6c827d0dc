import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import type { TranscriptClassification } from "./classification.js"
import { classifyGeminiTranscript, makeGeminiClassifier } from "./gemini-classify.js"
import { untypedType } from "./gemini-records.js"
import { type ReadOptions, readAllRecords } from "./reader.js"

const fixtures = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "gemini")
const fixture = (name: string) => NodePath.join(fixtures, name)

const classify = (path: string, options: ReadOptions = {}) =>
  readAllRecords(path, { untypedType, ...options }).pipe(
    Effect.map(({ records }) => ({ records, c: classifyGeminiTranscript(records) })),
    Effect.provide(NodeTranscriptFilesLive)
  )

const table = (c: TranscriptClassification) => c.decisions.map((d) => [d.line, d.decision, d.reason])
const indexed = (c: TranscriptClassification) =>
  c.turns.flatMap((t) => t.messages.map((m) => [t.number, m.kind, m.role, m.text, m.source.line]))

const HOOK = "hook context (blctx's own recall among them): never indexed"

let dir: string
beforeEach(() => {
  dir = Fs.realpathSync(Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-gemini-")))
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

describe("classifying real Gemini CLI 0.61 sessions", () => {
  it.effect(
    "a resumed session: the prompts without the hook's recall, commentary and answers; the copy, tool result and snapshots not indexed",
    () =>
      Effect.gen(function* () {
        const { c } = yield* classify(fixture("resumed-tool-call.jsonl"))
        expect(indexed(c)).toEqual([
          [1, "request", "user", "Which key should the cache use?", 3],
          [1, "final_answer", "assistant", "We decided the cache is keyed by tenant id, not by user.", 5],
          [2, "request", "user", "Please read the notes and tell me the retry budget.", 11],
          [2, "commentary", "assistant", "Let me read the notes.", 13],
          [2, "final_answer", "assistant", "Decision: the retry budget stays at 3 attempts with jitter.", 18]
        ])
        const byLine = new Map(c.decisions.map((d) => [d.line, d]))
        expect(byLine.get(1)?.reason).toBe("session header")
        expect(byLine.get(2)?.decision).toBe("metadata")
        expect(byLine.get(3)?.reason).toBe(`request (left out injected context: ${HOOK})`)
        expect(byLine.get(7)?.reason).toBe("session header written again: the session was resumed")
        expect(byLine.get(10)?.reason).toBe(
          "history snapshot: its messages are indexed at the lines where they were first written"
        )
        expect([byLine.get(15)?.decision, byLine.get(15)?.duplicate_of?.line]).toEqual(["duplicate", 13])
        expect(byLine.get(16)?.reason).toBe("tool result")
        expect(c.session).toMatchObject({
          id: "4a0db71c-cf50-403e-aaef-e138e941213c",
          cwd: "/home/dev/billing-service",
          started_at: "2026-12-03T19:17:41.289Z",
          subagent: null
        })
        expect([c.totals.turns, c.totals.parse_errors, c.totals.by_decision.unclassified]).toEqual([2, 0, 0])
        expect([c.totals.unknown_types, c.totals.unknown_fields]).toEqual([{}, {}])
        // Nothing the hook recalled, nor the session context, is ever proposed for the index.
        const texts = indexed(c).map((m) => String(m[3]))
        expect(texts.some((t) => t.includes("Recalled from history") || t.includes("session_context"))).toBe(false)
      })
  )

  it.effect("an @path prompt is indexed without the file contents the CLI pulled in", () =>
    Effect.gen(function* () {
      const { c } = yield* classify(fixture("file-reference.jsonl"))
      const request = c.decisions.find((d) => d.line === 3)
      expect(request?.message?.text).toBe("Summarise @notes.txt for the changelog.")
      expect(request?.reason).toBe(`request (left out injected context: referenced file contents (@path), ${HOOK})`)
      expect(indexed(c).map((m) => m[1])).toEqual(["request", "commentary", "final_answer"])
    })
  )

  it.effect("the lean summarizer proposes the same messages and totals", () =>
    Effect.gen(function* () {
      for (const name of ["resumed-tool-call.jsonl", "file-reference.jsonl", "schema-coverage.jsonl"]) {
        const { records, c } = yield* classify(fixture(name))
        const lean = makeGeminiClassifier({ decisions: false })
        for (const r of records) lean.push(r)
        const { decisions: _, ...summary } = c
        expect(lean.finish()).toEqual(summary)
      }
    })
  )
})

describe("the schema-coverage fixture: every shape this version knows, and what it does not", () => {
  it.effect("each line gets the decision and reason it should", () =>
    Effect.gen(function* () {
      const { c } = yield* classify(fixture("schema-coverage.jsonl"))
      expect(table(c)).toEqual([
        [1, "metadata", "session header"],
        [2, "metadata", "history snapshot: its messages are indexed at the lines where they were first written"],
        [3, "index", "request"],
        [4, "metadata", "session metadata update"],
        [5, "index", "final answer (last assistant message, no phase)"],
        [6, "index", "request"],
        [7, "excluded", "tool call (and its result)"],
        [8, "excluded", "tool result"],
        [9, "excluded", "tool call"],
        [10, "excluded", "reasoning"],
        [11, "index", "final answer (last assistant message, no phase)"],
        [12, "excluded", "info notice shown by Gemini CLI"],
        [13, "excluded", "error notice shown by Gemini CLI"],
        [14, "excluded", "warning notice shown by Gemini CLI"],
        [15, "metadata", "session metadata update"],
        [16, "metadata", "session metadata update"],
        [17, "metadata", "session metadata update"],
        [18, "index", `request (left out injected context: ${HOOK})`],
        [19, "context_only", `injected context: ${HOOK}`],
        [20, "metadata", "rewind marker: the later messages were taken back in the CLI (kept as they were said)"],
        [21, "index", "request"],
        [22, "unclassified", "model message with parts this version does not know"],
        [23, "index", "final answer (last assistant message, no phase)"],
        [
          24,
          "duplicate",
          "same assistant message as line 23 (written again by the CLI with its token counts or tool calls)"
        ],
        [25, "unclassified", "record type checkpoint is not interpreted"],
        [26, "unclassified", "unreadable line: not_a_record"]
      ])
      const texts = new Map(c.decisions.map((d) => [d.line, d.message?.text]))
      // A thought part is reasoning, not the answer; a hook's context inside a prompt is cut out.
      expect(texts.get(5)).toBe("Entries are rounded half-even to the cent.")
      expect(texts.get(18)).toBe("Should refunds round the same way?")
      expect(c.session).toMatchObject({ id: "3b8f0a52-6c1e-4d7a-9f20-5e4c3b2a1d00", cwd: "/home/dev/ledger" })
      expect(c.totals.unknown_types).toEqual({ checkpoint: 1 })
      expect(c.totals.unknown_fields).toEqual({ unknownFutureField: 1 })
      expect(c.turns.filter((t) => t.number > 0).map((t) => t.flags)).toEqual([[], [], ["no_answer"], []])
    })
  )

  it.effect("without the format's types, the untyped lines are what they were: not records", () =>
    Effect.gen(function* () {
      const { records } = yield* readAllRecords(fixture("schema-coverage.jsonl")).pipe(
        Effect.provide(NodeTranscriptFilesLive)
      )
      expect(records.filter((r) => r.kind === "parse_error").map((r) => r.line)).toEqual([1, 2, 4, 15, 16, 17, 20, 26])
    })
  )
})

describe("hostile Gemini CLI session files", () => {
  const header = JSON.stringify({ sessionId: "s-1", projectHash: "h", startTime: "2026-03-02T09:00:00.000Z" })
  const user = (id: string, text: string) => JSON.stringify({ id, type: "user", content: [{ text }] })
  const answer = (id: string, text: string) => JSON.stringify({ id, type: "gemini", content: text })

  it.effect("a truncated last line, invalid UTF-8 and an over-long line are counted; every other line is read", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "session-2026-03-02T09-00-s1.jsonl")
      const bad = Buffer.concat([
        Buffer.from('{"id":"u2","type":"user","content":"caf'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}')
      ])
      Fs.writeFileSync(
        path,
        Buffer.concat([
          Buffer.from(`${header}\n${user("u1", "Where is the ledger?")}\n`),
          bad,
          Buffer.from(`\n${user("u3", "x".repeat(4096))}\n${answer("g1", "In the ledger service.")}\n`),
          Buffer.from('{"id":"g2","type":"gemini","content":"cut off mid-wr')
        ])
      )
      const { c } = yield* classify(path, { maxLineBytes: 1024 })
      expect(c.unreadable_lines).toEqual([
        { line: 3, reason: "invalid_utf8" },
        { line: 4, reason: "line_too_long" },
        { line: 6, reason: "truncated_line" }
      ])
      expect(indexed(c).map((m) => m[3])).toEqual(["Where is the ledger?", "In the ledger service."])
    })
  )

  it.effect("a huge message is indexed whole, and its text is kept once", () =>
    Effect.gen(function* () {
      const path = NodePath.join(dir, "huge.jsonl")
      const huge = `The decision: ${"retry with jitter ".repeat(200_000)}`.trimEnd()
      Fs.writeFileSync(path, `${header}\n${user("u1", "Summarise it")}\n${answer("g1", huge)}\n${answer("g1", huge)}\n`)
      const { c } = yield* classify(path)
      expect(indexed(c).map((m) => [m[1], String(m[3]).length])).toEqual([
        ["request", 12],
        ["final_answer", huge.length]
      ])
      expect(c.decisions.at(-1)?.decision).toBe("duplicate")
    })
  )
})
