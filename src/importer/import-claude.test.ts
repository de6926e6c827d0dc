import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { importOnce, makeTempDir, withHistoryDb } from "./history-db.test-support.js"

/** The importer is format-neutral: a Claude Code transcript goes through the same path as a Codex one. */

const claudeFixtures = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "claude")
const SESSION = "11111111-1111-4111-8111-111111111111"
const PARENT = "55555555-5555-4555-8555-555555555555"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-import-claude-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const withDb = <A, E>(use: Parameters<typeof withHistoryDb<A, E>>[1]) => withHistoryDb(dir, use)

const copyFixture = (name: string, to: string) => {
  const target = NodePath.join(dir, to)
  Fs.mkdirSync(NodePath.dirname(target), { recursive: true })
  Fs.copyFileSync(NodePath.join(claudeFixtures, name), target)
  return target
}

interface Row {
  readonly id: number
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
  (sql) => sql<Row>`SELECT id, role, kind, text, line, byte_start, byte_end, session_id, source_type, agent, turn_number
                   FROM messages ORDER BY id`
)

const line = (record: unknown) => `${JSON.stringify(record)}\n`
const envelope = (uuid: string, timestamp: string) => ({
  parentUuid: null,
  isSidechain: false,
  userType: "external",
  cwd: "/home/user/project",
  sessionId: SESSION,
  version: "2.1.332",
  uuid,
  timestamp
})

describe("importing Claude Code transcripts", () => {
  it.effect("stores the selected messages with source type claude_transcript, agent claude and exact spans", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("plain-turn.jsonl", `projects/-home-user-project/${SESSION}.jsonl`)
        const report = yield* importOnce(path)
        expect(report.status).toBe("imported")
        expect(report.counts.unclassified).toBe(0)
        const stored = yield* rows
        expect(stored.map((r) => [r.kind, r.role, r.text])).toEqual([
          ["request", "user", "Which port does the dev server listen on?"],
          ["final_answer", "assistant", "The dev server listens on port 5173, set in vite.config.ts."],
          ["request", "user", "And the preview server?"],
          ["final_answer", "assistant", "The preview server uses port 4173."]
        ])
        const bytes = Fs.readFileSync(path)
        const lines = bytes.toString("utf8").split("\n")
        for (const r of stored) {
          expect([r.source_type, r.agent, r.session_id]).toEqual(["claude_transcript", "claude", SESSION])
          expect(bytes.subarray(r.byte_start, r.byte_end).toString("utf8")).toBe(lines[r.line - 1])
        }
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* sql<{ id: string; cwd: string; cli_version: string }>`
          SELECT id, cwd, cli_version FROM sessions`
        expect(sessions).toEqual([{ id: SESSION, cwd: "/home/user/project", cli_version: "2.1.332" }])
        expect((yield* importOnce(path)).status).toBe("unchanged")
      })
    )
  )

  it.effect("an append reuses the stored prefix, adds only the new turn, and redacts it", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("plain-turn.jsonl", `${SESSION}.jsonl`)
        yield* importOnce(path)
        const before = yield* rows
        const sizeBefore = Fs.statSync(path).size
        const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
        Fs.appendFileSync(
          path,
          line({
            ...envelope("00000000-0000-4000-8000-0000000000a1", "2026-03-01T10:05:00.000Z"),
            type: "user",
            message: { role: "user", content: `Push with ${secret} please.` }
          }) +
            line({
              ...envelope("00000000-0000-4000-8000-0000000000a2", "2026-03-01T10:05:01.000Z"),
              type: "attachment",
              attachment: { type: "hook_additional_context", content: ["Earlier work (blctx recall): pushed before."] }
            }) +
            line({
              ...envelope("00000000-0000-4000-8000-0000000000a3", "2026-03-01T10:05:02.000Z"),
              type: "assistant",
              message: { id: "msg_new", role: "assistant", content: [{ type: "text", text: "Pushed to origin." }] }
            })
        )
        const report = yield* importOnce(path)
        expect(report.status).toBe("appended")
        expect(report.counts.messages_added).toBe(2)
        expect(report.counts.redactions).toBe(1)
        expect(report.counts.bytes_parsed).toBeLessThan(Fs.statSync(path).size)
        expect(report.counts.bytes_parsed).toBeGreaterThanOrEqual(Fs.statSync(path).size - sizeBefore)
        const after = yield* rows
        expect(after.slice(0, before.length)).toEqual(before)
        const added = after.slice(before.length)
        expect(added.map((r) => r.text)).toEqual(["Push with [REDACTED:github_token] please.", "Pushed to origin."])
        expect(added.map((r) => r.turn_number)).toEqual([3, 3])
        for (const r of after) {
          expect(r.text).not.toContain(secret)
          expect(r.text).not.toContain("blctx recall")
        }
      })
    )
  )

  it.effect("a sub-agent's file and its parent's are two sessions, never a conflict", () =>
    withDb(
      Effect.gen(function* () {
        const parent = copyFixture("subagent-parent.jsonl", `p/${PARENT}.jsonl`)
        const agent = copyFixture(
          `${PARENT}/subagents/agent-a1b2c3d4e5f6a7b8.jsonl`,
          `p/${PARENT}/subagents/agent-a1b2c3d4e5f6a7b8.jsonl`
        )
        expect((yield* importOnce(parent)).status).toBe("imported")
        expect((yield* importOnce(agent)).status).toBe("imported")
        const sql = yield* SqlClient.SqlClient
        const sessions = yield* sql<{ id: string; subagent: string | null }>`
          SELECT id, subagent FROM sessions ORDER BY id`
        expect(sessions).toEqual([
          { id: PARENT, subagent: null },
          { id: `${PARENT}/agent-a1b2c3d4e5f6a7b8`, subagent: "sidechain" }
        ])
        expect((yield* rows).length).toBe(4)
      })
    )
  )

  it.effect("long API request and attachment lines are set aside without being decoded; the rest is the same", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("api-requests-and-attachments.jsonl", "big.jsonl")
        const big = "x".repeat(200 * 1024)
        const lines = Fs.readFileSync(path, "utf8").split("\n")
        const grown = lines.map((l) =>
          l.includes('"type":"api-request-shape"') || l.includes('"prompt_snapshot"')
            ? l.replace("You are a", `${big} You are a`)
            : l
        )
        Fs.writeFileSync(path, grown.join("\n"))
        const report = yield* importOnce(path)
        expect(report.counts.unclassified).toBe(0)
        expect((yield* rows).map((r) => r.text)).toEqual([
          "What is the deploy command?",
          "Run make ship-it from the repository root."
        ])
      })
    )
  )
})
