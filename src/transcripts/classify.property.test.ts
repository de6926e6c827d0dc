import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { fuzzParameters } from "../fuzz.test-support.js"
import { DECISIONS } from "./classification.js"
import { classifyTranscript } from "./classify.js"
import { classifyClaudeTranscript } from "./claude-classify.js"
import { decodeLine, isBlank } from "./decode-line.js"
import { LineSplitter } from "./line-splitter.js"
import type { TranscriptRecord } from "./record.js"

// Both classifiers over transcripts that look nearly right: real record types and block kinds
// mixed with wrong field types, unknown kinds, missing pieces and plain garbage lines. Whatever
// the file, each record gets one known decision with a reason, nothing throws, and every indexed
// text is text the file holds.

const MAX_LINE = 64 * 1024

const records = (lines: ReadonlyArray<string>): Array<TranscriptRecord> => {
  const splitter = new LineSplitter(MAX_LINE)
  const out: Array<TranscriptRecord> = []
  const bytes = new TextEncoder().encode(lines.join("\n"))
  for (const raw of [...splitter.push(bytes), ...splitter.end()])
    if (!isBlank(raw.bytes)) out.push(decodeLine(raw, MAX_LINE))
  return out
}

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("<system-reminder>x</system-reminder>", "<command-name>/clear</command-name>", "deploy on friday")
)
const anything = fc.oneof(text, fc.integer(), fc.constant(null), fc.boolean(), fc.jsonValue({ maxDepth: 3 }))
/** Mostly the valid shape, sometimes anything at all. */
const mostly = <A>(valid: fc.Arbitrary<A>) =>
  fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: anything as fc.Arbitrary<unknown> })
const timestamp = mostly(fc.constant("2026-03-01T10:00:00.000Z"))

// --- Claude Code ----------------------------------------------------------------------------

const claudeBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: mostly(text) }),
  fc.record({ type: fc.constant("thinking"), thinking: text }),
  fc.record({ type: fc.constant("tool_use"), id: text, name: text, input: anything }),
  fc.record({ type: fc.constant("tool_result"), tool_use_id: text, content: fc.oneof(text, fc.array(anything)) }),
  fc.record({ type: mostly(text) }, { requiredKeys: [] }),
  anything
)
const claudeRecord = fc.record(
  {
    type: fc.oneof(
      fc.constantFrom(
        "user",
        "assistant",
        "attachment",
        "system",
        "summary",
        "queue-operation",
        "file-history-snapshot"
      ),
      text
    ),
    uuid: mostly(fc.uuid()),
    parentUuid: fc.oneof(fc.uuid(), fc.constant(null)),
    sessionId: mostly(fc.constant("11111111-1111-4111-8111-111111111111")),
    timestamp,
    cwd: mostly(fc.constant("/home/user/project")),
    isMeta: mostly(fc.boolean()),
    isSidechain: mostly(fc.boolean()),
    message: fc.oneof(
      fc.record(
        {
          role: mostly(fc.constantFrom("user", "assistant")),
          content: mostly(fc.oneof(text, fc.array(claudeBlock, { maxLength: 4 })))
        },
        { requiredKeys: [] }
      ),
      anything
    ),
    attachment: fc.record({ type: mostly(text), content: anything }, { requiredKeys: [] }),
    summary: text
  },
  { requiredKeys: ["type"] }
)

/** A real prompt or a real answer, as Claude Code writes them. */
const claudeTurn = fc
  .record({
    type: fc.constantFrom("user", "assistant"),
    uuid: fc.uuid(),
    sessionId: fc.constant("11111111-1111-4111-8111-111111111111"),
    timestamp: fc.constant("2026-03-01T10:00:00.000Z"),
    cwd: fc.constant("/home/user/project"),
    words: fc.array(fc.constantFrom("deploy", "the", "daemon", "on", "friday", "é", "日本"), {
      minLength: 1,
      maxLength: 8
    })
  })
  .map(({ type, words, ...rest }) => ({
    ...rest,
    type,
    message:
      type === "user"
        ? { role: "user", content: words.join(" ") }
        : { role: "assistant", content: [{ type: "text", text: words.join(" ") }] }
  }))

// --- Codex ------------------------------------------------------------------------------------

const codexPayload = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom("message", "reasoning", "function_call", "function_call_output"),
      role: mostly(fc.constantFrom("user", "assistant", "developer")),
      content: fc.oneof(
        fc.array(
          fc.oneof(fc.record({ type: fc.constantFrom("input_text", "output_text"), text: mostly(text) }), anything),
          { maxLength: 3 }
        ),
        anything
      ),
      phase: mostly(fc.constantFrom("commentary", "final_answer"))
    },
    { requiredKeys: ["type"] }
  ),
  fc.record(
    {
      type: fc.constantFrom("user_message", "agent_message", "task_started", "task_complete", "token_count"),
      message: mostly(text),
      turn_id: mostly(text),
      phase: mostly(fc.constantFrom("commentary", "final_answer"))
    },
    { requiredKeys: ["type"] }
  ),
  fc.record({ id: text, cwd: text, cli_version: text }, { requiredKeys: [] }),
  anything
)
/** A real prompt or answer as Codex writes them: the response item and its event twin. */
const codexTurn = fc
  .record({
    user: fc.boolean(),
    words: fc.array(fc.constantFrom("deploy", "the", "daemon", "on", "friday", "é", "日本"), {
      minLength: 1,
      maxLength: 8
    })
  })
  .map(({ user, words }) => {
    const message = words.join(" ")
    return user
      ? { type: "event_msg", timestamp: "2026-03-01T10:00:00.000Z", payload: { type: "user_message", message } }
      : {
          type: "event_msg",
          timestamp: "2026-03-01T10:00:00.000Z",
          payload: { type: "agent_message", message, phase: "final_answer" }
        }
  })

const codexRecord = fc.record(
  {
    type: fc.oneof(fc.constantFrom("session_meta", "response_item", "event_msg", "turn_context", "compacted"), text),
    timestamp,
    payload: codexPayload
  },
  { requiredKeys: ["type"] }
)

const lines = (valid: fc.Arbitrary<unknown>, record: fc.Arbitrary<unknown>) =>
  fc.array(
    fc.oneof(
      { weight: 4, arbitrary: valid.map((r) => JSON.stringify(r)) },
      { weight: 4, arbitrary: record.map((r) => JSON.stringify(r)) },
      { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((s) => s.replace(/\n/g, " ")) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) }
    ),
    { maxLength: 30 }
  )

const stringsOf = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsOf)
      : value !== null && typeof value === "object"
        ? Object.values(value).flatMap(stringsOf)
        : []

const classifiers = [
  { name: "Claude Code", classify: classifyClaudeTranscript, lines: lines(claudeTurn, claudeRecord), runs: 1_000 },
  { name: "Codex", classify: classifyTranscript, lines: lines(codexTurn, codexRecord), runs: 1_000 }
] as const

describe("the transcript classifiers on near-valid transcripts", () => {
  for (const c of classifiers) {
    it(`${c.name}: one known decision with a reason per record, never a throw, indexed text from the file`, () => {
      let tried = 0
      let indexed = 0
      fc.assert(
        fc.property(c.lines, (input) => {
          tried++
          const parsed = records(input)
          const result = c.classify(parsed)
          expect(result.decisions.map((d) => d.line)).toEqual(parsed.map((r) => r.line))
          for (const d of result.decisions) {
            expect(DECISIONS).toContain(d.decision)
            expect(d.reason.length).toBeGreaterThan(0)
          }
          expect(result.totals.records).toBe(parsed.length)
          const parsedLines = input.join("\n").split("\n")
          for (const turn of result.turns) {
            for (const message of turn.messages) {
              indexed++
              // Every word of an indexed text is in a string of its source line.
              const strings = stringsOf(JSON.parse(parsedLines[message.source.line - 1] ?? "null")).join("\n")
              for (const word of message.text.split(/\s+/).filter((w) => w.length > 0)) {
                expect(strings).toContain(word)
              }
            }
          }
        }),
        fuzzParameters(c.runs)
      )
      console.log(`${c.name} classifier: ${tried} transcripts tried, ${indexed} messages indexed, no exception`)
    })
  }
})
