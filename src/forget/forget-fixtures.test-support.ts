import * as Fs from "node:fs"
import * as NodePath from "node:path"

/** Test support: small Codex transcripts carrying marker strings, and a raw scan for them. */

export interface Turn {
  readonly prompt: string
  readonly answer: string
  /** ISO time of the turn's first record; the others follow a second apart. */
  readonly at: string
}

const plus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString()

/** The records of one Codex turn (newer rollout format: event_msg copies and response_item copies). */
export const codexTurnLines = (turnId: string, turn: Turn): ReadonlyArray<unknown> => [
  { timestamp: turn.at, type: "event_msg", payload: { type: "task_started", turn_id: turnId } },
  {
    timestamp: plus(turn.at, 1),
    type: "response_item",
    payload: { type: "message", role: "user", content: [{ type: "input_text", text: turn.prompt }] }
  },
  {
    timestamp: plus(turn.at, 1),
    type: "event_msg",
    payload: { type: "user_message", message: turn.prompt, images: [] }
  },
  {
    timestamp: plus(turn.at, 2),
    type: "event_msg",
    payload: { type: "agent_message", message: turn.answer, phase: "final_answer" }
  },
  {
    timestamp: plus(turn.at, 2),
    type: "response_item",
    payload: {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: turn.answer }],
      phase: "final_answer"
    }
  },
  { timestamp: plus(turn.at, 3), type: "event_msg", payload: { type: "task_complete", turn_id: turnId } }
]

/** A whole Codex session file: its meta line, then each turn. */
export const codexSessionLines = (
  sessionId: string,
  cwd: string,
  turns: ReadonlyArray<Turn>
): ReadonlyArray<unknown> => [
  {
    timestamp: turns[0]?.at ?? "2026-03-01T10:00:00.000Z",
    type: "session_meta",
    payload: {
      id: sessionId,
      timestamp: turns[0]?.at ?? "2026-03-01T10:00:00.000Z",
      cwd,
      originator: "codex_cli_rs",
      cli_version: "0.120.0"
    }
  },
  ...turns.flatMap((turn, i) => codexTurnLines(`${sessionId}-t${i + 1}`, turn))
]

export const jsonLines = (lines: ReadonlyArray<unknown>) => `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`

/** Writes a session file in Codex's layout under `codexHome` and returns its path. */
export const writeCodexSession = (
  codexHome: string,
  sessionId: string,
  cwd: string,
  turns: ReadonlyArray<Turn>
): string => {
  const path = NodePath.join(
    codexHome,
    "sessions",
    "2026",
    "03",
    "01",
    `rollout-2026-03-01T10-00-00-${sessionId}.jsonl`
  )
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, jsonLines(codexSessionLines(sessionId, cwd, turns)))
  return path
}

/** Appends one more turn to a session file. */
export const appendCodexTurn = (path: string, turnId: string, turn: Turn) =>
  Fs.appendFileSync(path, jsonLines(codexTurnLines(turnId, turn)))

/**
 * Every file under `dir` (the database, its WAL and shared memory, anything else) whose raw bytes
 * hold `marker` as given, lower-cased (FTS5 stores folded terms) or upper-cased. Empty when none do.
 */
export const filesHolding = (dir: string, marker: string): ReadonlyArray<string> => {
  const needles = [...new Set([marker, marker.toLowerCase(), marker.toUpperCase()])].map((m) => Buffer.from(m))
  const found: Array<string> = []
  const walk = (d: string) => {
    for (const entry of Fs.readdirSync(d, { withFileTypes: true })) {
      const p = NodePath.join(d, entry.name)
      if (entry.isDirectory()) walk(p)
      else if (entry.isFile()) {
        const bytes = Fs.readFileSync(p)
        if (needles.some((n) => bytes.includes(n))) found.push(p)
      }
    }
  }
  walk(dir)
  return found
}
