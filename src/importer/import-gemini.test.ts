import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { importOnce, makeTempDir, withHistoryDb } from "./history-db.test-support.js"

/** The importer is format-neutral: a Gemini CLI session goes the same path as Codex's and Claude Code's. */

const geminiFixtures = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "gemini")
const SESSION = "4a0db71c-cf50-403e-aaef-e138e941213c"
const FILE = `.gemini/tmp/billing-service/chats/session-2026-12-03T19-17-4a0db71c.jsonl`

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-import-gemini-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const withDb = <A, E>(use: Parameters<typeof withHistoryDb<A, E>>[1]) => withHistoryDb(dir, use)

/** The fixture's lines: the first run wrote 1–6, the resumed run 7–19. */
const fixtureLines = () =>
  Fs.readFileSync(NodePath.join(geminiFixtures, "resumed-tool-call.jsonl"), "utf8").split("\n").filter(Boolean)

const place = (lines: ReadonlyArray<string>) => {
  const path = NodePath.join(dir, FILE)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, `${lines.join("\n")}\n`)
  return path
}

interface Row {
  readonly role: string
  readonly kind: string
  readonly text: string
  readonly line: number
  readonly byte_start: number
  readonly byte_end: number
  readonly session_id: string
  readonly source_type: string
  readonly agent: string
  readonly turn_number: number
}
const rows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<Row>`SELECT role, kind, text, line, byte_start, byte_end, session_id, source_type, agent, turn_number
                   FROM messages ORDER BY line`
)

const QUESTION_1 = "Which key should the cache use?"
const ANSWER_1 = "We decided the cache is keyed by tenant id, not by user."
const QUESTION_2 = "Please read the notes and tell me the retry budget."

describe("importing Gemini CLI sessions", () => {
  it.effect("stores the selected messages as gemini_transcript from agent gemini, cited by exact line and bytes", () =>
    withDb(
      Effect.gen(function* () {
        const path = place(fixtureLines().slice(0, 6))
        const first = yield* importOnce(path)
        expect([first.status, first.counts.messages_added, first.counts.unclassified]).toEqual(["imported", 2, 0])
        // The resumed run appends: only its new turn is read and added.
        Fs.appendFileSync(path, `${fixtureLines().slice(6).join("\n")}\n`)
        const appended = yield* importOnce(path)
        expect([appended.status, appended.counts.messages_added]).toEqual(["appended", 3])
        const stored = yield* rows
        expect(stored.map((r) => [r.turn_number, r.kind, r.text])).toEqual([
          [1, "request", QUESTION_1],
          [1, "final_answer", ANSWER_1],
          [2, "request", QUESTION_2],
          [2, "commentary", "Let me read the notes."],
          [2, "final_answer", "Decision: the retry budget stays at 3 attempts with jitter."]
        ])
        const bytes = Fs.readFileSync(path)
        const lines = bytes.toString("utf8").split("\n")
        for (const r of stored) {
          expect([r.source_type, r.agent, r.session_id]).toEqual(["gemini_transcript", "gemini", SESSION])
          expect(bytes.subarray(r.byte_start, r.byte_end).toString("utf8")).toBe(lines[r.line - 1])
          expect(r.text).not.toContain("Recalled from history")
        }
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* sql<{ id: string; cwd: string }>`SELECT id, cwd FROM sessions`
        expect(sessions).toEqual([{ id: SESSION, cwd: "/home/dev/billing-service" }])
        expect((yield* importOnce(path)).status).toBe("unchanged")
      })
    )
  )

  it.effect(
    "the CLI rewriting the file whole (its repair: header, each message once) with a new turn adds only that turn",
    () =>
      withDb(
        Effect.gen(function* () {
          const lines = fixtureLines()
          const path = place(lines)
          yield* importOnce(path)
          const before = yield* rows
          // What rewriteConversationFile writes: the header, then every message once, to a new file renamed over.
          const messages = lines.filter((l) => l.startsWith('{"id":'))
          const latest = new Map(messages.map((l) => [JSON.parse(l).id as string, l]))
          const added = [
            JSON.stringify({
              id: "u-new",
              timestamp: "2026-12-03T19:20:00.000Z",
              type: "user",
              content: [{ text: "And the timeout?" }]
            }),
            JSON.stringify({
              id: "g-new",
              timestamp: "2026-12-03T19:20:01.000Z",
              type: "gemini",
              content: "The timeout stays at 30 seconds."
            })
          ]
          const temp = `${path}.tmp-1`
          Fs.writeFileSync(temp, `${[lines[0], ...latest.values(), ...added].join("\n")}\n`)
          Fs.renameSync(temp, path)
          const report = yield* importOnce(path)
          expect(report.counts.messages_added).toBe(2)
          expect(report.counts.messages_removed).toBe(0)
          const after = yield* rows
          expect(after.map((r) => r.text)).toEqual([
            ...before.map((r) => r.text),
            "And the timeout?",
            "The timeout stays at 30 seconds."
          ])
          // Every stored message cites its line in the rewritten file.
          const text = Fs.readFileSync(path, "utf8").split("\n")
          for (const r of after) expect(text[r.line - 1]).toContain(JSON.stringify(r.text).slice(1, -1))
        })
      )
  )
})
