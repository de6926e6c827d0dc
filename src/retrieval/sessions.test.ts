import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { listSessions, SessionsRequest } from "./sessions.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-sessions-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const ALPHA = "0199e000-0000-7000-8000-00000000000a"
const BETA = "0199e000-0000-7000-8000-00000000000b"

const user = (timestamp: string, message: string) => ({
  timestamp,
  type: "event_msg",
  payload: { type: "user_message", message }
})
const answer = (timestamp: string, message: string) => ({
  timestamp,
  type: "event_msg",
  payload: { type: "agent_message", message, phase: "final_answer" }
})
const meta = (timestamp: string, id: string, cwd: string) => ({ timestamp, type: "session_meta", payload: { id, cwd } })

/** Two Codex sessions: alpha (two turns on March 1st), beta (one turn on March 3rd, in another project). */
const seed = Effect.suspend(() =>
  Effect.all([
    importOnce(
      writeTranscript(NodePath.join(dir, "alpha.jsonl"), [
        meta("2026-03-01T09:00:00Z", ALPHA, "/home/dev/alpha"),
        user("2026-03-01T09:00:01Z", "first question"),
        answer("2026-03-01T09:00:02Z", "first answer"),
        user("2026-03-01T17:00:00Z", "second question"),
        answer("2026-03-01T17:00:05Z", "second answer")
      ])
    ),
    importOnce(
      writeTranscript(NodePath.join(dir, "beta.jsonl"), [
        meta("2026-03-03T08:00:00Z", BETA, "/home/dev/beta"),
        user("2026-03-03T08:00:01Z", "beta question"),
        answer("2026-03-03T08:00:02Z", "beta answer")
      ])
    )
  ])
)

const request = (fields: Partial<typeof SessionsRequest.Encoded> = {}) => Schema.decodeSync(SessionsRequest)(fields)

describe("listSessions", () => {
  it.effect(
    "lists each session once with its agent, project, first and last activity and turn count, newest first",
    () =>
      withHistoryDb(
        dir,
        Effect.gen(function* () {
          yield* seed
          const all = yield* listSessions(request())
          expect(all.sessions.map((s) => ({ ...s }))).toEqual([
            {
              session_id: BETA,
              agent: "codex",
              project: "/home/dev/beta",
              first_activity: "2026-03-03T08:00:01.000Z",
              last_activity: "2026-03-03T08:00:02.000Z",
              turns: 1,
              messages: 2
            },
            {
              session_id: ALPHA,
              agent: "codex",
              project: "/home/dev/alpha",
              first_activity: "2026-03-01T09:00:01.000Z",
              last_activity: "2026-03-01T17:00:05.000Z",
              turns: 2,
              messages: 4
            }
          ])
          expect(all.next_offset).toBeNull()
        })
      )
  )

  it.effect("filters like recent: a date range, a project, an agent; pages with limit and offset", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const day1 = yield* listSessions(request({ since: "2026-03-01", until: "2026-03-02" }))
        expect(day1.sessions.map((s) => s.session_id)).toEqual([ALPHA])
        expect(day1.since).toBe("2026-03-01T00:00:00.000Z")
        const beta = yield* listSessions(request({ project: "/home/dev/beta/" }))
        expect(beta.sessions.map((s) => s.session_id)).toEqual([BETA])
        expect((yield* listSessions(request({ agent: "claude" }))).sessions).toEqual([])
        expect((yield* listSessions(request({ agent: "codex" }))).sessions).toHaveLength(2)
        const first = yield* listSessions(request({ limit: 1 }))
        expect(first.sessions.map((s) => s.session_id)).toEqual([BETA])
        expect(first.next_offset).toBe(1)
        const second = yield* listSessions(request({ limit: 1, offset: 1 }))
        expect(second.sessions.map((s) => s.session_id)).toEqual([ALPHA])
        expect(second.next_offset).toBeNull()
      })
    )
  )

  it.effect("refuses an unknown agent or an unreadable date with InvalidQuery, naming it", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        yield* seed
        const agent = yield* Effect.flip(listSessions(request({ agent: "cursor" })))
        expect(agent._tag).toBe("InvalidQuery")
        expect(agent.message).toContain("cursor")
        const date = yield* Effect.flip(listSessions(request({ since: "March" })))
        expect(date).toMatchObject({ _tag: "InvalidQuery" })
        expect(date.message).toContain("March")
      })
    )
  )

  it("bounds limit and offset as recent does", () => {
    expect(() => request({ limit: 0 })).toThrow()
    expect(() => request({ limit: 201 })).toThrow()
    expect(() => request({ offset: -1 })).toThrow()
    expect(request()).toMatchObject({ limit: 20, offset: 0 })
  })
})
