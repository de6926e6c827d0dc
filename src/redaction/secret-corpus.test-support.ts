import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SECRET_CORPUS, type SecretSample, secretFragments } from "./secret-corpus.js"

/**
 * Test support: the secret corpus written as Codex rollout files, and a per-shape check of which
 * samples survive in some output. Every message the corpus writes contains the word `corpuscheck`,
 * so one search finds them all.
 */

export const CORPUS_WORD = "corpuscheck"
export const CORPUS_PROJECT = "/home/dev/secret-corpus"

const uuid = (n: number, tail = 0) =>
  `0199e${n.toString(16).padStart(3, "0")}-0000-7000-8000-${tail.toString(16).padStart(12, "0")}`

/** A Codex turn in the newer format: both copies of the request and of the final answer. */
const turnLines = (at: () => string, turnId: string, cwd: string, request: string, answer: string) => [
  { timestamp: at(), type: "event_msg", payload: { type: "task_started", turn_id: turnId } },
  { timestamp: at(), type: "turn_context", payload: { cwd, turn_id: turnId, model: "m" } },
  {
    timestamp: at(),
    type: "response_item",
    payload: { type: "message", role: "user", content: [{ type: "input_text", text: request }] }
  },
  { timestamp: at(), type: "event_msg", payload: { type: "user_message", message: request } },
  { timestamp: at(), type: "event_msg", payload: { type: "agent_message", message: answer, phase: "final_answer" } },
  {
    timestamp: at(),
    type: "response_item",
    payload: {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: answer }],
      phase: "final_answer"
    }
  },
  { timestamp: at(), type: "event_msg", payload: { type: "task_complete", turn_id: turnId } }
]

export interface CorpusFiles {
  /** Every rollout file written, the message session first. */
  readonly files: ReadonlyArray<string>
  /** The number of messages the classifier selects from them (a request and an answer per turn). */
  readonly messages: number
}

/**
 * Writes the corpus under `dir` the way Codex files sessions: one session whose turns carry every
 * message sample (alternately in the request and in the final answer), and one session per
 * working-directory sample, whose `session_meta` and `turn_context` carry it as `cwd`.
 */
export const writeCorpusTranscripts = (
  dir: string,
  corpus: ReadonlyArray<SecretSample> = SECRET_CORPUS,
  startMs = Date.UTC(2026, 2, 1, 9)
): CorpusFiles => {
  let clock = startMs
  const at = () => {
    clock += 1000
    return new Date(clock).toISOString()
  }
  const write = (n: number, cwd: string, turns: ReadonlyArray<readonly [string, string]>) => {
    const id = uuid(n)
    const path = NodePath.join(dir, "sessions", "2026", "03", "01", `rollout-2026-03-01T09-00-00-${id}.jsonl`)
    const lines: Array<unknown> = [
      {
        timestamp: at(),
        type: "session_meta",
        payload: { id, timestamp: at(), cwd, originator: "codex_cli_rs", cli_version: "0.120.0" }
      }
    ]
    for (const [i, [request, answer]] of turns.entries())
      lines.push(...turnLines(at, uuid(n, i + 1), cwd, request, answer))
    Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
    Fs.writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`)
    return path
  }
  const inMessages = corpus.filter((s) => s.where === "message")
  const turns = inMessages.map((sample, i): readonly [string, string] => {
    const carrier = `${CORPUS_WORD} ${i}: ${sample.text}`
    const plain = `${CORPUS_WORD} ${i}: noted, thanks.`
    return i % 2 === 0 ? [carrier, plain] : [plain, carrier]
  })
  const files = [write(1, CORPUS_PROJECT, turns)]
  for (const [i, sample] of corpus.filter((s) => s.where === "cwd").entries()) {
    files.push(
      write(2 + i, sample.text, [
        [`${CORPUS_WORD} cwd ${i}: what does this directory hold?`, `${CORPUS_WORD} cwd ${i}: the build output.`]
      ])
    )
  }
  return { files, messages: 2 * (turns.length + files.length - 1) }
}

/** What must not be found of a sample: its secrets, and their own words (see `secretFragments`). */
export const needlesOf = (sample: SecretSample): ReadonlyArray<string> => [
  ...sample.secrets,
  ...sample.secrets.flatMap((s) =>
    (s.match(/[A-Za-z0-9]{8,}/g) ?? []).filter((f) => /[0-9]/.test(f) && /[A-Za-z]/.test(f))
  )
]

export interface Survivor {
  readonly shape: string
  readonly needle: string
  readonly where: string
}

/**
 * Which samples survive in the given places (text compared case-insensitively for the fragments,
 * exactly for the secrets; bytes as UTF-8). One entry per shape and place at most.
 */
export const survivorsIn = (
  places: ReadonlyArray<{ readonly where: string; readonly content: string | Buffer }>,
  corpus: ReadonlyArray<SecretSample> = SECRET_CORPUS
): ReadonlyArray<Survivor> => {
  const found: Array<Survivor> = []
  for (const place of places) {
    const text = typeof place.content === "string" ? place.content : undefined
    const lower = text?.toLowerCase()
    for (const sample of corpus) {
      const fragments = sample.secrets.flatMap(secretFragments)
      const needle =
        sample.secrets.find((s) =>
          text !== undefined ? text.includes(s) : (place.content as Buffer).includes(Buffer.from(s, "utf8"))
        ) ??
        (lower !== undefined
          ? fragments.find((f) => lower.includes(f))
          : needlesOf(sample).find((n) => (place.content as Buffer).includes(Buffer.from(n, "utf8"))))
      if (needle !== undefined) found.push({ shape: sample.shape, needle, where: place.where })
    }
  }
  return found
}
