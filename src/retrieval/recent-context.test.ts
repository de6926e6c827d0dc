import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { expandContext } from "./context.js"
import { SearchRequest } from "./contract.js"
import { recentTurns } from "./recent.js"
import { search } from "./search.js"
import { resolveRange, TimeRangeError } from "./time-range.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-recent-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const line = (timestamp: string | undefined, type: string, payload: unknown) =>
  timestamp === undefined ? { type, payload } : { timestamp, type, payload }

const seed = Effect.suspend(() =>
  importOnce(
    writeTranscript(NodePath.join(dir, "s.jsonl"), [
      line("2026-03-01T10:00:00Z", "session_meta", {
        id: "0199e000-0000-7000-8000-000000000001",
        cwd: "/home/dev/alpha"
      }),
      line("2026-03-01T23:59:59Z", "event_msg", { type: "user_message", message: "first question" }),
      line("2026-03-01T23:59:59Z", "event_msg", {
        type: "agent_message",
        message: "first answer",
        phase: "final_answer"
      }),
      line("2026-03-02T00:00:00Z", "event_msg", { type: "user_message", message: "second question" }),
      line("2026-03-02T00:00:01Z", "event_msg", {
        type: "agent_message",
        message: `long ${"y".repeat(30_000)}`,
        phase: "final_answer"
      }),
      line(undefined, "event_msg", { type: "user_message", message: "a question without a time" })
    ])
  )
)

const range = (since?: string, until?: string) => {
  const r = resolveRange({ since, until, nowMs: 0 })
  if (r instanceof TimeRangeError) throw r
  return r
}

describe("recentTurns", () => {
  it.effect("groups by turn, filters by activity time with UTC day boundaries, newest first", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const day1 = yield* recentTurns(range("2026-03-01", "2026-03-02"), null, 10, 0)
        expect(day1.turns).toHaveLength(1)
        expect(day1.turns[0]?.messages.map((m) => m.text)).toEqual(["first question", "first answer"])
        expect(day1.unknown_timestamps).toBe(1)
        const day2 = yield* recentTurns(range("2026-03-02", "2026-03-03"), null, 10, 0)
        expect(day2.turns.map((t) => t.messages[0]?.text)).toEqual(["second question"])
        const all = yield* recentTurns(range(), null, 10, 0)
        expect(all.turns.map((t) => t.last_activity)).toEqual([
          "2026-03-02T00:00:01.000Z",
          "2026-03-01T23:59:59.000Z",
          null
        ])
        // The long answer used the whole text budget: later turns are listed with nothing shown.
        expect(all.turns[2]?.messages_not_shown).toBe(1)
        const elsewhere = yield* recentTurns(range(), "/home/dev/beta", 10, 0)
        expect(elsewhere.turns).toEqual([])
      })
    )
  )

  it.effect("never returns more than 24,000 characters of text", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const all = yield* recentTurns(range(), null, 10, 0)
        expect(all.truncated).toBe(true)
        expect(all.returned_chars).toBe(24_000)
      })
    )
  )
})

describe("expandContext", () => {
  it.effect("expands a search hit to its turn and pages a long message by characters", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const hit = (yield* search(SearchRequest.make({ query: "second question" }), Option.none(), "none")).results[0]
        expect(hit?.text).toBe("second question")
        const first = yield* expandContext({ context_id: hit?.context_id ?? "", limit: 10, char_offset: 0 })
        expect(first.messages[0]?.text).toBe("second question")
        expect(first.messages[0]?.is_anchor).toBe(true)
        expect(first.messages[1]?.text_truncated).toBe(true)
        expect(first.returned_chars).toBe(24_000)
        expect(first.next_offset).toBe(first.messages[1]?.index)
        const rest = yield* expandContext({
          context_id: hit?.context_id ?? "",
          offset: first.next_offset ?? 0,
          limit: 1,
          char_offset: first.next_char_offset ?? 0
        })
        const whole = `${first.messages[1]?.text ?? ""}${rest.messages[0]?.text ?? ""}`
        expect(whole).toBe(`long ${"y".repeat(30_000)}`)
        expect(rest.messages[0]?.char_offset).toBe(first.next_char_offset)
        expect(rest.next_char_offset).toBeNull()
      })
    )
  )

  it.effect("an unknown context id is a typed error", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const error = yield* Effect.flip(expandContext({ context_id: "c999999", limit: 5, char_offset: 0 }))
        expect(error._tag).toBe("ContextNotFound")
        const bad = yield* Effect.flip(expandContext({ context_id: "drop table", limit: 5, char_offset: 0 }))
        expect(bad._tag).toBe("ContextNotFound")
      })
    )
  )
})
