import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Schema } from "effect"
import { RephrasingsField } from "../../src/retrieval/contract.js"
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
/** The first set's kinds: at least 100 questions, written before any tuning. */
export const KINDS = [...POSITIVE_KINDS, "negative"] as const
/**
 * Questions about time ("… last week"), written after the first baseline and kept apart from it:
 * read against `time_reference`, they expect a turn from that time.
 */
export const TIME_KIND = "time"
export type Kind = (typeof KINDS)[number] | typeof TIME_KIND

const Common = {
  id: Schema.String,
  query: Schema.String,
  heldout: Schema.Boolean
}

/** Answered by a person's request or an agent's answer: any of `expect` counts as the hit. */
export const PositiveQuestion = Schema.Struct({
  ...Common,
  kind: Schema.Literal(...POSITIVE_KINDS, TIME_KIND),
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
  questions: Schema.Array(Question),
  /** The now and zone questions of kind `time` are read against. */
  time_reference: Schema.Struct({ now: Schema.String, time_zone: Schema.String, note: Schema.String })
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

/**
 * bench/recall/rephrasings.json: what an agent calling search sends as `rephrasings` for each
 * question, by id (decision 0029). Decoded with the request's own schema, so its bounds hold.
 */
export const RephrasingsFile = Schema.Struct({
  description: Schema.String,
  rephrasings: Schema.Record({ key: Schema.String, value: RephrasingsField })
})

/** Each question's rephrasings, read from `rephrasings.json` in `dir`. */
export const readRephrasings = (dir: string): ReadonlyMap<string, ReadonlyArray<string>> =>
  new Map(
    Object.entries(
      Schema.decodeUnknownSync(RephrasingsFile)(
        JSON.parse(Fs.readFileSync(NodePath.join(dir, "rephrasings.json"), "utf8"))
      ).rephrasings
    )
  )
