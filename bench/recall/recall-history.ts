import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Schema } from "effect"
import type { RecordDecision } from "../../src/transcripts/classification.js"
import { classifyTranscript } from "../../src/transcripts/classify.js"
import { classifyClaudeTranscript } from "../../src/transcripts/claude-classify.js"
import { decodeLine, isBlank } from "../../src/transcripts/decode-line.js"
import { LineSplitter } from "../../src/transcripts/line-splitter.js"
import type { TranscriptRecord } from "../../src/transcripts/record.js"

/**
 * The recall benchmark's history (fixtures/recall-history) and its questions
 * (bench/recall/questions.json): the file format, and how a cited line is classified.
 */

/** A line of a fixture file, relative to fixtures/recall-history (`codex/sessions/…/rollout-….jsonl`). */
export const Cited = Schema.Struct({ file: Schema.String, line: Schema.Int })
export type Cited = typeof Cited.Type

export const POSITIVE_KINDS = ["exact", "identifier", "paraphrase", "multi-turn"] as const
export const KINDS = [...POSITIVE_KINDS, "negative"] as const
export type Kind = (typeof KINDS)[number]

const Common = {
  id: Schema.String,
  query: Schema.String,
  heldout: Schema.Boolean
}

/** Answered by a person's request or an agent's answer: any of `expect` counts as the hit. */
export const PositiveQuestion = Schema.Struct({
  ...Common,
  kind: Schema.Literal(...POSITIVE_KINDS),
  expect: Schema.Array(Cited).pipe(Schema.minItems(1))
})

/** Answerable only from tool output or injected context: `distractors` are those lines. */
export const NegativeQuestion = Schema.Struct({
  ...Common,
  kind: Schema.Literal("negative"),
  distractors: Schema.Array(Cited).pipe(Schema.minItems(1))
})

export const Question = Schema.Union(PositiveQuestion, NegativeQuestion)
export type Question = typeof Question.Type

export const QuestionFile = Schema.Struct({
  description: Schema.String,
  heldout_rule: Schema.String,
  clean_rule: Schema.String,
  questions: Schema.Array(Question)
})
export type QuestionFile = typeof QuestionFile.Type

/** The held-out rule the file states: within each kind, in file order, every 4th question. */
export const isHeldOut = (indexWithinKind: number): boolean => indexWithinKind % 4 === 3

const MAX_LINE = 16 * 1024 * 1024

const recordsOf = (bytes: Uint8Array): Array<TranscriptRecord> => {
  const splitter = new LineSplitter(MAX_LINE)
  const out: Array<TranscriptRecord> = []
  for (const raw of [...splitter.push(bytes), ...splitter.end()])
    if (!isBlank(raw.bytes)) out.push(decodeLine(raw, MAX_LINE))
  return out
}

/** Every line's decision, as the importer's classifier makes it (Claude Code files live under `claude/`). */
export const classifyFixture = (root: string, file: string): ReadonlyMap<number, RecordDecision> => {
  const records = recordsOf(Fs.readFileSync(NodePath.join(root, file)))
  const classification = file.startsWith("claude/") ? classifyClaudeTranscript(records) : classifyTranscript(records)
  return new Map(classification.decisions.map((d) => [d.line, d]))
}

/** Every `.jsonl` file under `dir`, relative to it, sorted. */
export const fixtureFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.split(NodePath.sep).join("/"))
    .sort()
