import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { SearchRequest } from "./contract.js"
import {
  type Candidate,
  coverageGroup,
  NEIGHBOUR_WEIGHT,
  rerank,
  SESSION_WEIGHT,
  sessionCoverage
} from "./lexical-rerank.js"
import { search } from "./search.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-rerank-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const line = (timestamp: string, type: string, payload: unknown) => ({ timestamp, type, payload })

/** A Codex session of turns, each a request and its final answer (and optional follow-ups). */
const importSession = (name: string, turns: ReadonlyArray<readonly [string, string]>) => {
  const id = `0199e000-0000-7000-8000-${String(name.length * 1000 + name.charCodeAt(0)).padStart(12, "0")}`
  const at = (i: number) => `2026-03-01T10:${String(i).padStart(2, "0")}:00.000Z`
  return importOnce(
    writeTranscript(NodePath.join(dir, `${name}.jsonl`), [
      line(at(0), "session_meta", { id, cwd: `/home/dev/${name}`, cli_version: "0.120.0" }),
      ...turns.flatMap(([request, answer], i) => [
        line(at(i + 1), "event_msg", { type: "user_message", message: request }),
        line(at(i + 1), "event_msg", { type: "agent_message", message: answer, phase: "final_answer" })
      ])
    ])
  )
}

const texts = (query: string, limit = 5) =>
  Effect.map(search(SearchRequest.make({ query, limit }), Option.none(), "no model"), (r) =>
    r.results.map((h) => h.text)
  )

const page = (offset: number, limit: number) =>
  Effect.map(
    search(SearchRequest.make({ query: "deploy rollout service", limit, offset }), Option.none(), "no model"),
    (r) => r.results.map((h) => h.text)
  )

/** Filler turns, so no word of a test is common by accident. */
const filler = Array.from(
  { length: 12 },
  (_, i) => [`Rename the widget ${i}.`, `Renamed widget ${i} to gadget ${i}.`] as const
)

describe("words-only ranking", () => {
  it.effect("conversational phrasing does not outweigh the word the question is about", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* importSession("chat", [
          ["What did we do with it, how do I do that again?", "We did what you asked."],
          ["Clean the narwhal tank.", "The narwhal tank is scrubbed every Friday."],
          ...filler
        ])
        const top = (yield* texts("how do I do what we did with the narwhal"))[0]
        expect(top).toBe("The narwhal tank is scrubbed every Friday.")
      })
    )
  )

  it.effect("the answer ranks above the question it answers", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* importSession("infra", [
          ["Which region for the new cluster?", "The cluster runs in eu-central-1, close to our customers."],
          ...filler
        ])
        expect(yield* texts("cluster region", 2)).toEqual([
          "The cluster runs in eu-central-1, close to our customers.",
          "Which region for the new cluster?"
        ])
      })
    )
  )

  it.effect("a flag with its value, as written, ranks above shorter lines with its stem", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* importSession("jobs", [
          ["Retry it.", "Retrying now."],
          ["Should the job retry?", "Retries are on."],
          ["Make step 1 faster.", "Step 1 is cached now, step 2 next."],
          ["Step 1 of the import?", "Step 1 reads the files."],
          [
            "How do we keep a broken file from stopping the import?",
            "Run the importer with --retries 1 so a failing file is tried once more before it is skipped and logged."
          ],
          ...filler
        ])
        const top = (yield* texts("the --retries 1 flag"))[0]
        expect(top).toBe(
          "Run the importer with --retries 1 so a failing file is tried once more before it is skipped and logged."
        )
      })
    )
  )

  it.effect("a snake_case name finds the same name written in camelCase", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* importSession("code", [
          ["Where is the counter kept?", "The retryCount field on the job row counts attempts."],
          ...filler
        ])
        expect(yield* texts("retry_count")).toContain("The retryCount field on the job row counts attempts.")
      })
    )
  )

  it.effect("the agent's progress note does not rise above the request it follows", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const at = "2026-03-01T10:00:00.000Z"
        yield* importOnce(
          writeTranscript(NodePath.join(dir, "notes.jsonl"), [
            line(at, "session_meta", {
              id: "0199e000-0000-7000-8000-0000000000c1",
              cwd: "/home/dev/c",
              cli_version: "0.120.0"
            }),
            line(at, "event_msg", { type: "user_message", message: "Fix the failing date test." }),
            line(at, "event_msg", {
              type: "agent_message",
              message: "Looking at the test first.",
              phase: "commentary"
            }),
            line(at, "event_msg", {
              type: "agent_message",
              message: "Done: it now freezes the clock.",
              phase: "final_answer"
            })
          ])
        )
        yield* importSession("other", filler)
        expect((yield* texts("failing date test"))[0]).toBe("Fix the failing date test.")
      })
    )
  )

  it.effect("fusion keeps the exact flag match first when the vector side ranks it last", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* importSession("jobs", [
          ["Retry it.", "Retrying now."],
          ["Should the job retry?", "Retries are on."],
          ["Run it again with --retries 1 please.", "Done: the importer ran with --retries 1 and skipped two files."],
          ...filler
        ])
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ id: number; text: string }>`SELECT id, text FROM chunks ORDER BY id DESC`
        const target = "Done: the importer ran with --retries 1 and skipped two files."
        // Every other chunk first, the exact one last: a vector side that knows nothing of flags.
        const hits = [...rows.filter((r) => r.text !== target), ...rows.filter((r) => r.text === target)].map(
          (r, i) => ({ id: r.id, score: 1 - i / 100 })
        )
        const fused = yield* search(SearchRequest.make({ query: "--retries 1", limit: 5 }), Option.some({ hits }), "")
        expect(fused.query_mode).toBe("hybrid")
        expect(fused.results[0]?.text).toBe(target)
      })
    )
  )

  it.effect("pages past the reranked places continue the same order without repeats", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* importSession(
          "many",
          Array.from(
            { length: 80 },
            (_, i) => [`Deploy service ${i}?`, `Deployed service ${i} with the rollout.`] as const
          )
        )
        // Two pages of 100 (the second past the reranked places) against pages of 30.
        const all = [...(yield* texts("deploy rollout service", 100)), ...(yield* page(100, 100))]
        expect(all.length).toBe(160)
        const pages: Array<string> = []
        for (let offset = 0; offset < 160; offset += 30) {
          pages.push(...(yield* page(offset, 30)))
        }
        expect(pages).toEqual(all)
        expect(new Set(pages).size).toBe(160)
      })
    )
  )
})

describe("rerank", () => {
  const candidate = (
    id: number,
    session: string,
    turn: number,
    role: string,
    text: string,
    rank: number
  ): Candidate => ({
    chunk_id: id,
    message_id: id,
    session_id: session,
    turn_number: turn,
    role,
    kind: role === "user" ? "request" : "final_answer",
    text,
    rank
  })

  it("lifts a chunk whose neighbouring turn matched the question's other words", () => {
    const query = { words: ["nightly", "backup", "fourteen", "days"], forms: [] }
    // BM25 prefers the travel answer (shorter); the backup answer's previous turn asked for the backup.
    const travel = candidate(1, "travel", 1, "assistant", "Fourteen days in Porto.", -3)
    const kept = candidate(2, "backups", 2, "assistant", "Fourteen days in the archive bucket.", -2.8)
    const asked = candidate(3, "backups", 1, "user", "Set up the nightly backup.", -4)
    const ranked = rerank([asked, travel, kept], query).map((r) => r.row.chunk_id)
    expect(NEIGHBOUR_WEIGHT).toBeGreaterThan(0)
    expect(ranked.indexOf(2)).toBeLessThan(ranked.indexOf(1))
    // Without the neighbour (another session's turn), BM25's order stands.
    const alone = rerank([{ ...asked, session_id: "elsewhere" }, travel, kept], query).map((r) => r.row.chunk_id)
    expect(alone.indexOf(1)).toBeLessThan(alone.indexOf(2))
  })

  it("lifts a turn whose session holds the whole question, over one whose session holds a part", () => {
    const query = { words: ["ledger", "export", "timeout"], forms: [] }
    // BM25 prefers the other project's timeout answer; the ledger session names every word, four turns apart.
    const other = candidate(1, "proxy", 1, "assistant", "The timeout is 30 s now.", -3)
    const answer = candidate(2, "ledger", 1, "assistant", "Raised the timeout to 60 s.", -2.8)
    const earlier = candidate(3, "ledger", 5, "user", "The ledger export keeps failing.", -1)
    expect(SESSION_WEIGHT).toBeGreaterThan(0)
    const ranked = rerank([other, answer, earlier], query).map((r) => r.row.chunk_id)
    expect(ranked.indexOf(2)).toBeLessThan(ranked.indexOf(1))
    // Without the session's other turn, BM25's order stands.
    const alone = rerank([other, answer], query).map((r) => r.row.chunk_id)
    expect(alone).toEqual([1, 2])
  })
})

describe("sessionCoverage", () => {
  const row = (id: number, session: string | null, text: string): Candidate => ({
    chunk_id: id,
    message_id: id,
    session_id: session,
    turn_number: 1,
    role: "assistant",
    kind: "final_answer",
    text,
    rank: -1
  })

  it("is the share of the question's words a session's candidates hold, written whole", () => {
    const rows = [
      row(1, "a", "The Ledger export failed."),
      row(2, "a", "A timeout, again."),
      row(3, "b", "Exporter timeouts"),
      row(4, null, "ledger notes"),
      row(5, null, "export")
    ]
    const cover = sessionCoverage(rows, ["ledger", "export", "timeout", "retry"])
    expect(cover.get("a")).toBe(0.75)
    // "exporter" and "timeouts" are other words: only BM25's stems match them.
    expect(cover.get("b")).toBe(0)
    // Rows outside a session (notes) stand for themselves.
    expect(rows.slice(3).map((r) => cover.get(coverageGroup(r)))).toEqual([0.25, 0.25])
    expect(sessionCoverage([row(1, "a", "ledger")], []).get("a")).toBe(0)
  })
})
