import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { findTimePhrase } from "../../src/retrieval/time-phrases.js"
import {
  type Cited,
  classifyFixture,
  fixtureFiles,
  isHeldOut,
  KINDS,
  type Question,
  QuestionFile,
  readRephrasings,
  TIME_KIND
} from "./recall-history.js"

// The recall benchmark's questions (bench/recall/questions.json) against its history
// (fixtures/recall-history): every cited line exists and is what the question says it is, the
// held-out rule holds, and the set is big and varied enough to measure anything.

const repository = NodePath.resolve(import.meta.dirname, "..", "..")
const history = NodePath.join(repository, "fixtures", "recall-history")
const file = Schema.decodeUnknownSync(QuestionFile)(
  JSON.parse(Fs.readFileSync(NodePath.join(repository, "bench", "recall", "questions.json"), "utf8"))
)
const questions = file.questions

const decisions = new Map(fixtureFiles(history).map((file) => [file, classifyFixture(history, file)]))
const decisionOf = (cited: Cited) => decisions.get(cited.file)?.get(cited.line)
const where = (q: Question, cited: Cited) => `${q.id} (${q.query}) cites ${cited.file}:${cited.line}`

/** Lines a negative's answer may come from: tool output, and context the agent injected. */
const TOOL_OUTPUT = new Set(["response_item/function_call_output", "user/tool_result"])
const isToolOutputOrContext = (decision: string, recordType: string, reason: string) =>
  (decision === "excluded" && TOOL_OUTPUT.has(recordType)) ||
  (decision === "context_only" && reason.startsWith("injected context"))

describe("the recall benchmark's questions", () => {
  it("are at least 100 before the questions about time, of every kind, with unique ids", () => {
    expect(questions.filter((q) => q.kind !== TIME_KIND).length).toBeGreaterThanOrEqual(100)
    for (const kind of KINDS) expect(questions.filter((q) => q.kind === kind).length).toBeGreaterThanOrEqual(8)
    expect(new Set(questions.map((q) => q.id)).size).toBe(questions.length)
  })

  it("each have the rephrasings an agent sends, within the search request's bounds", () => {
    // Decoding with the request's schema checks the bounds; every question has an entry, even empty.
    const rephrasings = readRephrasings(NodePath.join(repository, "bench", "recall"))
    expect([...rephrasings.keys()].sort()).toEqual(questions.map((q) => q.id).sort())
  })

  it("hold out every 4th question of each kind, in file order", () => {
    for (const kind of [...KINDS, TIME_KIND]) {
      const ofKind = questions.filter((q) => q.kind === kind)
      expect(ofKind.map((q) => q.heldout)).toEqual(ofKind.map((_, i) => isHeldOut(i)))
    }
  })

  it("cite a person's request or an agent's final answer for every positive question", () => {
    for (const q of questions) {
      if (q.kind === "negative") continue
      for (const cited of q.expect) {
        const d = decisionOf(cited)
        expect(d, where(q, cited)).toBeDefined()
        expect(d?.decision, where(q, cited)).toBe("index")
        expect(["request", "final_answer"], where(q, cited)).toContain(d?.kind)
      }
      // A multi-turn question is answered by a question and its follow-up: both are named.
      if (q.kind === "multi-turn") expect(q.expect.length, q.id).toBeGreaterThanOrEqual(2)
    }
  })

  it("about time expect only turns from the time their phrase means", () => {
    const now = Date.parse(file.time_reference.now)
    const timed = questions.filter((q) => q.kind === TIME_KIND)
    expect(timed.length).toBeGreaterThanOrEqual(8)
    for (const q of timed) {
      const found = findTimePhrase(q.query, now, file.time_reference.time_zone)
      expect(found, q.query).not.toBeNull()
      if (q.kind === "negative" || found === null) continue
      for (const cited of q.expect) {
        const at = Date.parse(decisionOf(cited)?.timestamp ?? "")
        expect(
          at >= Date.parse(found.since ?? "0000-01-01") && at < Date.parse(found.until ?? "9999-01-01"),
          where(q, cited)
        ).toBe(true)
      }
    }
  })

  it("name tool output or injected context as the only source of every negative's answer", () => {
    for (const q of questions) {
      if (q.kind !== "negative") continue
      for (const cited of q.distractors) {
        const d = decisionOf(cited)
        expect(d, where(q, cited)).toBeDefined()
        expect(
          isToolOutputOrContext(d?.decision ?? "", d?.record_type ?? "", d?.reason ?? ""),
          `${where(q, cited)}: ${d?.decision} ${d?.record_type} ${d?.reason}`
        ).toBe(true)
      }
    }
  })

  it("are asked of a history every line of which the importer understands", () => {
    const files = [...decisions.keys()]
    expect(files.some((f) => f.startsWith("codex/sessions/"))).toBe(true)
    expect(files.some((f) => f.startsWith("codex/archived_sessions/"))).toBe(true)
    expect(files.some((f) => f.startsWith("claude/projects/"))).toBe(true)
    for (const [file, lines] of decisions) {
      expect(
        [...lines.values()].filter((d) => d.decision === "unclassified"),
        file
      ).toEqual([])
    }
  })
})
