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

/**
 * Writes `files` Codex rollout files of `turnsPerFile` turns each, in the newer format (turn ids,
 * both representations of every message, reasoning, a tool call and token counts per turn).
 */
export const writeSyntheticHistory = (dir: string, files: number, turnsPerFile: number, seed = 7, firstSession = 1) => {
  const next = rng(seed)
  const paths: Array<string> = []
  let clock = Date.UTC(2026, 0, 1)
  for (let f = 0; f < files; f++) {
    const id = uuid(firstSession + f)
    const path = NodePath.join(
      dir,
      "sessions",
      "2026",
      "01",
      String((f % 28) + 1).padStart(2, "0"),
      `rollout-${id}.jsonl`
    )
    Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
    const at = () => {
      clock += 1000
      return new Date(clock).toISOString()
    }
    const lines: Array<unknown> = [
      {
        timestamp: at(),
        type: "session_meta",
        payload: { id, cwd: `/home/dev/project-${f % 7}`, cli_version: "0.120.0" }
      }
    ]
    for (let t = 0; t < turnsPerFile; t++) {
      const turn = `${id}-t${t}`
      const request = sentence(next, 8 + Math.floor(next() * 40))
      const commentary = sentence(next, 10 + Math.floor(next() * 30))
      const answer = sentence(next, 20 + Math.floor(next() * 160))
      lines.push(
        { timestamp: at(), type: "event_msg", payload: { type: "task_started", turn_id: turn } },
        {
          timestamp: at(),
          type: "turn_context",
          payload: { cwd: `/home/dev/project-${f % 7}`, turn_id: turn, model: "m" }
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
          payload: { type: "reasoning", summary: [{ type: "summary_text", text: sentence(next, 20) }] }
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
          payload: { type: "function_call_output", call_id: `c${t}`, output: sentence(next, 30) }
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
        { timestamp: at(), type: "event_msg", payload: { type: "task_complete", turn_id: turn } }
      )
    }
    Fs.writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`)
    paths.push(path)
  }
  return paths
}
