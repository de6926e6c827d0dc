import * as Fs from "node:fs"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { makeTempDir, withHistoryDb } from "../importer/history-db.test-support.js"
import { KNOWN_AGENTS } from "./agent-filter.js"
import { ContextRequest, expandContext } from "./context.js"
import { SearchHit, SearchRequest } from "./contract.js"
import { makeHistoryReadsSql } from "./history-reads-sql.js"
import { RecentRequest, recentTurns } from "./recent.js"
import { search } from "./search.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-cross-agent-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const CODEX_FILE = "/home/u/.codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-codex-s1.jsonl"
const CLAUDE_FILE = "/home/u/.claude/projects/-home-dev-alpha/claude-s1.jsonl"
/** A session a note was logged in with a binding key no hook issued: no agent is recorded. */
const SHARED_SESSION = "7d9b3c1e-0000-4000-8000-000000000001"
/** A session opened with the binding key Claude's hooks gave it. */
const CLAUDE_SESSION = "7d9b3c1e-0000-4000-8000-000000000002"
const CLAUDE_BINDING = "5a1f0e2d-0000-4000-8000-00000000000c"

const TEXTS = {
  codex: "Codex: we deploy alpha with a blue-green rollout",
  claude: "Claude: the alpha deploy waits for the Friday freeze",
  shared: "Note: the alpha deploy checklist lives in docs/deploy.md",
  claudeNote: "Note from Claude: alpha deploy freeze starts Friday noon"
} as const

/**
 * One Codex and one Claude Code transcript (a user request and an answer each), a note no agent
 * is recorded for, and a note logged in a session opened with Claude's hook binding key.
 */
const seed = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const file = (path: string, session: string) =>
    Effect.map(
      sql<{ id: number }>`INSERT INTO source_files ${sql.insert({
        path,
        session_id: session,
        size: 1000,
        mtime_ms: 0,
        ino: 1,
        indexed_bytes: 1000,
        prefix_sha256: "x",
        resume_byte: 0,
        resume_line: 0,
        resume_turn: 0,
        records: 3,
        unclassified: 0,
        parse_errors: 0,
        state: "indexed",
        imported_at: "2026-03-02T00:00:00Z"
      })} RETURNING id`,
      (rows) => rows[0]?.id ?? 0
    )
  const message = (text: string, columns: Record<string, unknown>) =>
    Effect.gen(function* () {
      const row = yield* sql<{ id: number }>`INSERT INTO messages ${sql.insert({
        turn_number: 1,
        role: "assistant",
        kind: "final_answer",
        text,
        text_sha256: "x",
        redactions: 0,
        cwd: "/home/dev/alpha",
        ...columns
      })} RETURNING id`
      yield* sql`INSERT INTO chunks (message_id, ordinal, char_start, char_end, text, tokenizer)
                 VALUES (${row[0]?.id ?? 0}, 0, 0, ${text.length}, ${text}, 'whole-message')`
    })
  const transcript = (agent: string, path: string, session: string, answer: string, at: string) =>
    Effect.gen(function* () {
      const id = yield* file(path, session)
      const span = { source_type: `${agent}_transcript`, agent, source_file_id: id, session_id: session }
      yield* message(`How does the alpha deploy work? (${agent})`, {
        ...span,
        role: "user",
        kind: "request",
        line: 2,
        byte_start: 100,
        byte_end: 200,
        timestamp: at
      })
      yield* message(answer, { ...span, line: 3, byte_start: 200, byte_end: 300, timestamp: at })
    })
  yield* transcript("codex", CODEX_FILE, "codex-s1", TEXTS.codex, "2026-03-01T10:00:00Z")
  yield* transcript("claude", CLAUDE_FILE, "claude-s1", TEXTS.claude, "2026-03-01T11:00:00Z")

  yield* sql`INSERT INTO context_sessions ${sql.insert([
    { id: SHARED_SESSION, binding_key: "0b0b0b0b-0000-4000-8000-000000000001", created_at: "2026-03-01T00:00:00Z" },
    { id: CLAUDE_SESSION, binding_key: CLAUDE_BINDING, created_at: "2026-03-01T00:00:00Z" }
  ])}`
  yield* sql`INSERT INTO capture_bindings ${sql.insert({
    binding_key: CLAUDE_BINDING,
    session_uuid: "5a1f0e2d-0000-4000-8000-0000000000ff",
    agent: "claude",
    agent_home: "/home/u/.claude",
    event_session_id: "claude-s1",
    generation: "g1",
    cwd: "/home/dev/alpha",
    first_event_at: "2026-03-01T11:00:00Z",
    last_event_at: "2026-03-01T11:00:00Z",
    state: "awaiting_path"
  })}`
  const note = (text: string, noteId: string, session: string, at: string) =>
    message(text, {
      source_type: "authored_update",
      agent: null,
      role: "agent",
      kind: "decision",
      note_id: noteId,
      note_revision: 1,
      session_id: session,
      timestamp: at
    })
  yield* note(TEXTS.shared, "note-shared", SHARED_SESSION, "2026-03-01T12:00:00Z")
  yield* note(TEXTS.claudeNote, "note-claude", CLAUDE_SESSION, "2026-03-01T13:00:00Z")
})

const lexical = (query: string, filters: SearchRequest["filters"] = {}) =>
  search(SearchRequest.make({ query, filters, limit: 20 }), Option.none(), "no model")

const texts = (hits: ReadonlyArray<SearchHit>) => hits.map((h) => h.text).sort()
const answers = (hits: ReadonlyArray<SearchHit>) => texts(hits.filter((h) => h.role !== "user"))

const ALL = [TEXTS.codex, TEXTS.claude, TEXTS.shared, TEXTS.claudeNote].sort()

describe("cross-agent recall", () => {
  it.effect("search spans every agent by default, and each result says its agent, source type and file", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const answer = yield* lexical("alpha deploy")
        expect(answers(answer.results)).toEqual(ALL)
        const byText = new Map(answer.results.map((h) => [h.text, h]))
        expect(byText.get(TEXTS.codex)).toMatchObject({
          agent: "codex",
          source_type: "codex_transcript",
          source: { kind: "transcript_span", agent: "codex", path: CODEX_FILE, line: 3 }
        })
        expect(byText.get(TEXTS.claude)).toMatchObject({
          agent: "claude",
          source_type: "claude_transcript",
          source: { kind: "transcript_span", agent: "claude", path: CLAUDE_FILE, line: 3 }
        })
        // Notes have no agent of their own: the session's binding names one, or none is recorded.
        expect(byText.get(TEXTS.shared)).toMatchObject({
          agent: null,
          source_type: "authored_update",
          source: { kind: "note_revision", note_id: "note-shared", revision: 1 }
        })
        expect(byText.get(TEXTS.claudeNote)).toMatchObject({ agent: "claude", source_type: "authored_update" })
        // The agent is part of the encoded answer (what the RPC, the CLI and MCP send).
        const encoded = Schema.encodeSync(SearchHit)(byText.get(TEXTS.claude) as SearchHit)
        expect([encoded.agent, encoded.source_type]).toEqual(["claude", "claude_transcript"])
      })
    )
  )

  it.effect("the agent filter keeps that agent's transcripts and the notes no other agent's session wrote", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const claude = yield* lexical("alpha deploy", { agent: "claude" })
        expect(answers(claude.results)).toEqual([TEXTS.claude, TEXTS.shared, TEXTS.claudeNote].sort())
        expect(claude.results.every((h) => h.agent === "claude" || h.agent === null)).toBe(true)
        const codex = yield* lexical("alpha deploy", { agent: "codex" })
        expect(answers(codex.results)).toEqual([TEXTS.codex, TEXTS.shared].sort())
        expect(codex.results.some((h) => h.source.kind === "transcript_span" && h.source.path === CLAUDE_FILE)).toBe(
          false
        )
        // Combined with the other filters, each narrows further.
        const notes = yield* lexical("alpha deploy", { agent: "codex", source_type: "authored_update" })
        expect(texts(notes.results)).toEqual([TEXTS.shared])
        const claudeTranscript = yield* lexical("alpha deploy", { agent: "codex", source_type: "claude_transcript" })
        expect(claudeTranscript.results).toEqual([])
      })
    )
  )

  it.effect("a hybrid search drops vector hits of another agent", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const sql = yield* SqlClient.SqlClient
        const chunks = yield* sql<{ id: number }>`SELECT id FROM chunks ORDER BY id`
        const answer = yield* search(
          SearchRequest.make({ query: "freeze", filters: { agent: "codex" }, limit: 20 }),
          Option.some({ hits: chunks.map((c) => ({ id: c.id, score: 0.9 })) }),
          "unused"
        )
        expect(answer.query_mode).toBe("hybrid")
        expect(answer.results.length).toBeGreaterThan(0)
        expect(answer.results.every((h) => h.agent === "codex" || h.agent === null)).toBe(true)
        expect(answer.results.map((h) => h.text)).toContain(TEXTS.shared)
      })
    )
  )

  it.effect("recent spans every agent by default; the filter narrows; messages carry agent and source type", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const everything = { sinceMs: null, untilMs: null }
        const all = yield* recentTurns(everything, null, 20, 0)
        expect(all.agent).toBeNull()
        const messages = all.turns.flatMap((t) => t.messages)
        expect(messages.map((m) => m.text).filter((t) => !t.startsWith("How"))).toEqual([
          TEXTS.claudeNote,
          TEXTS.shared,
          TEXTS.claude,
          TEXTS.codex
        ])
        expect(messages.map((m) => [m.text, m.agent, m.source_type])).toContainEqual([
          TEXTS.claude,
          "claude",
          "claude_transcript"
        ])
        expect(messages.map((m) => [m.text, m.agent, m.source_type])).toContainEqual([
          TEXTS.shared,
          null,
          "authored_update"
        ])
        const codex = yield* recentTurns(everything, null, 20, 0, "codex")
        expect(codex.agent).toBe("codex")
        expect(codex.turns.flatMap((t) => t.messages.map((m) => m.text)).filter((t) => !t.startsWith("How"))).toEqual([
          TEXTS.shared,
          TEXTS.codex
        ])
        const claude = yield* recentTurns(everything, null, 20, 0, "claude")
        expect(claude.turns.flatMap((t) => t.messages.map((m) => m.source))).toContainEqual(
          expect.objectContaining({ kind: "transcript_span", agent: "claude", path: CLAUDE_FILE })
        )
        expect(claude.turns.flatMap((t) => t.messages.map((m) => m.agent)).every((a) => a !== "codex")).toBe(true)
      })
    )
  )

  it.effect("context names each message's agent; with agent, another agent's source is refused", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const hits = (yield* lexical("alpha deploy")).results
        const idOf = (text: string) => hits.find((h) => h.text === text)?.context_id ?? ""
        const request = (context_id: string, agent?: string) =>
          ContextRequest.make({ context_id, ...(agent === undefined ? {} : { agent }) })

        const claude = yield* expandContext(request(idOf(TEXTS.claude)))
        expect(claude.messages.map((m) => [m.agent, m.source_type])).toEqual([
          ["claude", "claude_transcript"],
          ["claude", "claude_transcript"]
        ])
        expect((yield* expandContext(request(idOf(TEXTS.claude), "claude"))).messages).toHaveLength(2)
        const refused = yield* Effect.flip(expandContext(request(idOf(TEXTS.claude), "codex")))
        expect(refused).toMatchObject({ _tag: "ContextOfOtherAgent", agent: "codex", found: "claude" })
        // A note no agent is recorded for is everyone's; a note of Claude's session is Claude's.
        expect((yield* expandContext(request(idOf(TEXTS.shared), "codex"))).messages[0]?.agent).toBeNull()
        const claudeNote = yield* Effect.flip(expandContext(request(idOf(TEXTS.claudeNote), "codex")))
        expect(claudeNote._tag).toBe("ContextOfOtherAgent")
      })
    )
  )

  it.effect("an unknown agent is an invalid query naming the known agents, in every read", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const reads = yield* makeHistoryReadsSql({ database: "context.db", vectors: Either.left("no vectors") })
        const hit = (yield* lexical("alpha deploy")).results[0]
        const failures = [
          yield* Effect.flip(
            reads.search({
              request: SearchRequest.make({ query: "deploy", filters: { agent: "cursor" } }),
              vectors: null,
              lexical_reason: "none"
            })
          ),
          yield* Effect.flip(reads.recent(RecentRequest.make({ agent: "Codex" }))),
          yield* Effect.flip(reads.context(ContextRequest.make({ context_id: hit?.context_id ?? "", agent: "gpt" })))
        ]
        for (const failure of failures) {
          expect(failure._tag).toBe("InvalidQuery")
          expect(failure.message).toMatch(
            /^unknown agent "[A-Za-z]+": blctx keeps the history of codex, claude or gemini\./
          )
        }
        const claudeHit = (yield* lexical("alpha deploy", { source_type: "claude_transcript" })).results[0]
        const other = yield* Effect.flip(
          reads.context(ContextRequest.make({ context_id: claudeHit?.context_id ?? "", agent: "codex" }))
        )
        expect(other._tag).toBe("InvalidQuery")
        expect(other.message).toContain("comes from claude's history, not codex's")
        // Every known agent is accepted, and the request schemas keep the field open and bounded.
        for (const agent of KNOWN_AGENTS) {
          const answer = yield* reads.search({
            request: SearchRequest.make({ query: "deploy", filters: { agent } }),
            vectors: null,
            lexical_reason: "none"
          })
          expect(answer.results.length).toBeGreaterThan(0)
        }
        expect(
          Either.isLeft(Schema.decodeUnknownEither(SearchRequest)({ query: "x", filters: { agent: "a".repeat(65) } }))
        ).toBe(true)
      })
    )
  )
})
