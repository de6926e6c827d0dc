import * as Fs from "node:fs"
import * as NodePath from "node:path"

/** Deterministic pseudo-random numbers, so every run measures the same history. */
export const rng = (seed: number) => {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const WORDS = (
  "deploy rollout migration schema index query vector chunk token daemon socket service unit journal " +
  "cache model download verify retry backoff timeout budget latency memory thread worker lock writer " +
  "reader transcript session turn prompt answer commit branch merge review test fixture benchmark " +
  "release tag changelog config default override path permission owner symlink manifest purge"
).split(" ")

const sentence = (next: () => number, words: number) =>
  Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)] ?? "x").join(" ")

const uuid = (n: number) => `0199${n.toString(16).padStart(4, "0")}-0000-7000-8000-${n.toString(16).padStart(12, "0")}`

/** The texts of one synthetic turn. */
export interface SyntheticTurn {
  readonly request: string
  readonly reasoning: string
  readonly commentary: string
  readonly toolOutput: string
  readonly answer: string
}

/**
 * Writes one Codex rollout file, in the newer format (turn ids, both representations of every
 * message, reasoning, a tool call and token counts per turn), for session number `session` (its
 * uuid, its day folder and its project come from it and from `index`, the file's position in the
 * run). `turn(t)` gives the texts of turn `t`; `clock` is advanced a second per record.
 */
export const writeRolloutFile = (
  dir: string,
  session: number,
  index: number,
  turns: number,
  turn: (t: number) => SyntheticTurn,
  clock: { value: number }
): string => {
  const id = uuid(session)
  const path = NodePath.join(
    dir,
    "sessions",
    "2026",
    "01",
    String((index % 28) + 1).padStart(2, "0"),
    `rollout-${id}.jsonl`
  )
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  const at = () => {
    clock.value += 1000
    return new Date(clock.value).toISOString()
  }
  const lines: Array<unknown> = [
    {
      timestamp: at(),
      type: "session_meta",
      payload: { id, cwd: `/home/dev/project-${index % 7}`, cli_version: "0.120.0" }
    }
  ]
  for (let t = 0; t < turns; t++) {
    const turnId = `${id}-t${t}`
    const { request, reasoning, commentary, toolOutput, answer } = turn(t)
    lines.push(
      { timestamp: at(), type: "event_msg", payload: { type: "task_started", turn_id: turnId } },
      {
        timestamp: at(),
        type: "turn_context",
        payload: { cwd: `/home/dev/project-${index % 7}`, turn_id: turnId, model: "m" }
      },
      {
        timestamp: at(),
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_text", text: request }] }
      },
      { timestamp: at(), type: "event_msg", payload: { type: "user_message", message: request } },
      {
        timestamp: at(),
        type: "response_item",
        payload: { type: "reasoning", summary: [{ type: "summary_text", text: reasoning }] }
      },
      {
        timestamp: at(),
        type: "event_msg",
        payload: { type: "agent_message", message: commentary, phase: "commentary" }
      },
      {
        timestamp: at(),
        type: "response_item",
        payload: {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: commentary }],
          phase: "commentary"
        }
      },
      {
        timestamp: at(),
        type: "response_item",
        payload: { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: `c${t}` }
      },
      {
        timestamp: at(),
        type: "response_item",
        payload: { type: "function_call_output", call_id: `c${t}`, output: toolOutput }
      },
      {
        timestamp: at(),
        type: "event_msg",
        payload: { type: "agent_message", message: answer, phase: "final_answer" }
      },
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
      { timestamp: at(), type: "event_msg", payload: { type: "token_count", info: null } },
      { timestamp: at(), type: "event_msg", payload: { type: "task_complete", turn_id: turnId } }
    )
  }
  Fs.writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`)
  return path
}

/**
 * Writes `files` Codex rollout files of `turnsPerFile` turns each, in the newer format (turn ids,
 * both representations of every message, reasoning, a tool call and token counts per turn).
 */
export const writeSyntheticHistory = (dir: string, files: number, turnsPerFile: number, seed = 7, firstSession = 1) => {
  const next = rng(seed)
  const paths: Array<string> = []
  const clock = { value: Date.UTC(2026, 0, 1) }
  for (let f = 0; f < files; f++) {
    paths.push(
      writeRolloutFile(
        dir,
        firstSession + f,
        f,
        turnsPerFile,
        () => {
          // The order of draws is the original one: request, commentary, answer, reasoning, output.
          const request = sentence(next, 8 + Math.floor(next() * 40))
          const commentary = sentence(next, 10 + Math.floor(next() * 30))
          const answer = sentence(next, 20 + Math.floor(next() * 160))
          const reasoning = sentence(next, 20)
          const toolOutput = sentence(next, 30)
          return { request, reasoning, commentary, toolOutput, answer }
        },
        clock
      )
    )
  }
  return paths
}
