import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Schema, TestClock } from "effect"
import { inProcessClient } from "../daemon/daemon-core.test-support.js"
import { importOnce, makeTempDir, withHistoryDb, writeTranscript } from "../importer/history-db.test-support.js"
import { recordSkipped } from "../importer/import-retry.js"
import { IndexActivityRequest, indexActivity, offsetSpans } from "./index-activity.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-index-activity-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const ALPHA = "0199e000-0000-7000-8000-0000000000a1"
const BETA = "0199e000-0000-7000-8000-0000000000b2"

const meta = (timestamp: string, id: string) => ({
  timestamp,
  type: "session_meta",
  payload: { id, cwd: "/home/dev/project" }
})
const user = (timestamp: string, message: string) => ({
  timestamp,
  type: "event_msg",
  payload: { type: "user_message", message }
})

const request = (fields: Partial<typeof IndexActivityRequest.Encoded> = {}) =>
  Schema.decodeSync(IndexActivityRequest)(fields)

/** The daemon's "now": March 10th 2026, noon UTC (New York already on summer time since March 8th). */
const NOW = Date.parse("2026-03-10T12:00:00Z")

/**
 * Alpha: one message at 04:30 UTC on March 1st (23:30 on February 28th in New York) and one at
 * 05:30 (00:30 on March 1st there), and one at 04:30 UTC on March 9th (00:30 on March 9th in New
 * York's summer time, still March 8th by its winter offset). Beta: one on March 1st, 18:00 UTC.
 * Plus one in January, outside a 30-day window.
 */
const seed = Effect.suspend(() =>
  Effect.all([
    importOnce(
      writeTranscript(NodePath.join(dir, "alpha.jsonl"), [
        meta("2026-01-05T10:00:00Z", ALPHA),
        user("2026-01-05T10:00:01Z", "an old question"),
        user("2026-03-01T04:30:00Z", "late evening question"),
        user("2026-03-01T05:30:00Z", "just after midnight question"),
        user("2026-03-09T04:30:00Z", "after the clocks changed")
      ])
    ),
    importOnce(
      writeTranscript(NodePath.join(dir, "beta.jsonl"), [
        meta("2026-03-01T18:00:00Z", BETA),
        user("2026-03-01T18:00:01Z", "beta question")
      ])
    )
  ])
)

const atNow = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.zipRight(TestClock.setTime(NOW), effect)

describe("indexActivity: days", () => {
  it.effect("counts messages, chunks and sessions per day in the daemon's zone, across a DST change", () =>
    withHistoryDb(
      dir,
      atNow(
        Effect.gen(function* () {
          yield* seed
          const ny = yield* indexActivity(request({ days: 30 }), "America/New_York")
          expect(ny.days).toEqual([
            { day: "2026-02-28", messages: 1, chunks: 1, sessions: 1 },
            { day: "2026-03-01", messages: 2, chunks: 2, sessions: 2 },
            { day: "2026-03-09", messages: 1, chunks: 1, sessions: 1 }
          ])
          const utc = yield* indexActivity(request({ days: 30 }), "UTC")
          expect(utc.days).toEqual([
            { day: "2026-03-01", messages: 3, chunks: 3, sessions: 2 },
            { day: "2026-03-09", messages: 1, chunks: 1, sessions: 1 }
          ])
          // A zone whose offset is not whole hours (UTC+05:45): 18:00 UTC is 23:45 there.
          const kathmandu = yield* indexActivity(request({ days: 30 }), "Asia/Kathmandu")
          expect(kathmandu.days.map((d) => [d.day, d.messages])).toEqual([
            ["2026-03-01", 3],
            ["2026-03-09", 1]
          ])
        })
      )
    )
  )

  it.effect("counts only the requested days, ending today in the zone; 90 by default", () =>
    withHistoryDb(
      dir,
      atNow(
        Effect.gen(function* () {
          yield* seed
          // Two days in New York: March 9th and 10th.
          const two = yield* indexActivity(request({ days: 2 }), "America/New_York")
          expect(two.days.map((d) => d.day)).toEqual(["2026-03-09"])
          // Ten days: March 1st to 10th; February 28th (New York) is left out.
          const ten = yield* indexActivity(request({ days: 10 }), "America/New_York")
          expect(ten.days.map((d) => d.day)).toEqual(["2026-03-01", "2026-03-09"])
          const fallback = yield* indexActivity(request(), "UTC")
          expect(fallback.days.map((d) => d.day)).toEqual(["2026-01-05", "2026-03-01", "2026-03-09"])
        })
      )
    )
  )

  it.effect("reads a timestamp written with an offset as the instant it is", () =>
    withHistoryDb(
      dir,
      atNow(
        Effect.gen(function* () {
          yield* importOnce(
            writeTranscript(NodePath.join(dir, "offset.jsonl"), [
              meta("2026-03-09T22:00:00-05:00", ALPHA),
              // 04:30 UTC on March 10th: today in New York (00:30), though its text says the 9th.
              user("2026-03-09T23:30:00-05:00", "asked with an offset"),
              // 03:59 UTC on March 10th: still March 9th in New York (23:59).
              user("2026-03-10T03:59:00Z", "asked in UTC")
            ])
          )
          const today = yield* indexActivity(request({ days: 1 }), "America/New_York")
          expect(today.days).toEqual([{ day: "2026-03-10", messages: 1, chunks: 1, sessions: 1 }])
          const two = yield* indexActivity(request({ days: 2 }), "America/New_York")
          expect(two.days.map((d) => [d.day, d.messages])).toEqual([
            ["2026-03-09", 1],
            ["2026-03-10", 1]
          ])
        })
      )
    )
  )

  it("bounds days from 1 to 366 on the schema, 90 when left out", () => {
    expect(request().days).toBe(90)
    expect(request({ days: 366 }).days).toBe(366)
    expect(() => request({ days: 0 })).toThrow()
    expect(() => request({ days: 367 })).toThrow()
    expect(() => request({ days: 1.5 })).toThrow()
  })

  it("cuts a year into spans of one offset at each DST change, to the minute", () => {
    const from = Date.parse("2026-01-01T05:00:00Z")
    const until = Date.parse("2027-01-01T05:00:00Z")
    const spans = offsetSpans(from, until, "America/New_York")
    expect(spans.map((s) => [new Date(s.until).toISOString(), s.offset / 3_600_000])).toEqual([
      ["2026-03-08T07:00:00.000Z", -5],
      ["2026-11-01T06:00:00.000Z", -4],
      ["2027-01-01T05:00:00.000Z", -5]
    ])
    expect(offsetSpans(from, until, "UTC")).toEqual([{ from, until, offset: 0 }])
  })
})

/** A `source_files` row of `state`, as the importer writes one (its counts do not matter here). */
const sourceFile = (path: string, state: string, session: string | null) => ({
  path,
  session_id: session,
  size: 10,
  mtime_ms: 1,
  ino: 1,
  indexed_bytes: 0,
  prefix_sha256: "",
  resume_byte: 0,
  resume_line: 0,
  resume_turn: 0,
  records: 0,
  unclassified: 0,
  parse_errors: 0,
  state,
  note: null
})

/** An import job as the job store keeps it, with the problems its checkpoint names. */
const importJob = (job: {
  id: string
  paths: ReadonlyArray<string>
  state: string
  at: string
  problems?: ReadonlyArray<{ path: string; problem: string }>
}) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO jobs ${sql.insert({
        id: job.id,
        kind: "import",
        params: JSON.stringify({ paths: job.paths, origin: "cli" }),
        state: job.state,
        checkpoint: JSON.stringify({
          next_file: job.paths.length,
          counts: {},
          ...(job.problems === undefined ? {} : { problems: job.problems })
        }),
        submitted_at: job.at,
        updated_at: job.at,
        finished_at: job.at
      })}`
  )

describe("indexActivity: skipped files", () => {
  it.effect("names the newest skipped files once each, with their reasons and agents, and counts them", () =>
    withHistoryDb(
      dir,
      atNow(
        Effect.gen(function* () {
          yield* seed
          const sql = yield* SqlClient.SqlClient
          const alpha = NodePath.join(dir, "alpha.jsonl")
          const locked = "/home/dev/.codex/sessions/locked.jsonl"
          const fixed = "/home/dev/.codex/sessions/fixed.jsonl"
          const gone = "/home/dev/.codex/sessions/gone.jsonl"
          const partly = "/home/dev/.codex/sessions/partly.jsonl"
          // Alpha was skipped after interrupted imports (an import_retries row), at NOW.
          yield* recordSkipped(alpha, Option.none(), "the import was interrupted 2 times; skipped")
          // A conflict: another file claims beta's session.
          yield* sql`INSERT INTO source_files ${sql.insert({
            ...sourceFile("/home/dev/.codex/sessions/beta-copy.jsonl", "conflict", BETA),
            note: "session already imported from another file",
            imported_at: "2026-03-05T08:00:00.000Z"
          })}`
          // Import jobs: locked named twice (the newer reason wins), fixed named and then imported
          // by a later job without a problem (no longer skipped), gone named once.
          yield* importJob({
            id: "job-1",
            paths: [locked, fixed, gone],
            state: "partial",
            at: "2026-03-02T08:00:00.000Z",
            problems: [
              { path: locked, problem: "permission denied (EACCES) on open" },
              { path: fixed, problem: "not a transcript blctx can read" },
              { path: gone, problem: "the file was removed before it was read" }
            ]
          })
          // Partly read by job-2 (lines it could not parse): imported, so not a skipped file.
          yield* sql`INSERT INTO source_files ${sql.insert({
            ...sourceFile(partly, "indexed", null),
            imported_at: "2026-03-04T08:00:00.500Z"
          })}`
          yield* importJob({
            id: "job-2",
            paths: [locked, fixed, partly],
            state: "partial",
            at: "2026-03-04T08:00:00.000Z",
            problems: [
              { path: locked, problem: "permission denied (EACCES) on read" },
              { path: partly, problem: "2 lines could not be read" }
            ]
          })
          yield* importJob({ id: "job-3", paths: [fixed], state: "completed", at: "2026-03-06T08:00:00.000Z" })

          const answer = yield* indexActivity(request(), "UTC")
          expect(answer.skipped_files).toEqual([
            {
              path: alpha,
              agent: "codex",
              reason: "the import was interrupted 2 times; skipped",
              at: "2026-03-10T12:00:00.000Z"
            },
            {
              path: "/home/dev/.codex/sessions/beta-copy.jsonl",
              agent: "codex",
              reason: "session already imported from another file",
              at: "2026-03-05T08:00:00.000Z"
            },
            { path: locked, agent: null, reason: "permission denied (EACCES) on read", at: "2026-03-04T08:00:00.000Z" },
            {
              path: gone,
              agent: null,
              reason: "the file was removed before it was read",
              at: "2026-03-02T08:00:00.000Z"
            }
          ])
          expect(answer.skipped_total).toBe(4)
        })
      )
    )
  )

  it.effect("an empty index answers no days and no skipped files", () =>
    withHistoryDb(
      dir,
      atNow(
        Effect.gen(function* () {
          expect({ ...(yield* indexActivity(request(), "Europe/Berlin")) }).toEqual({
            days: [],
            skipped_files: [],
            skipped_total: 0
          })
        })
      )
    )
  )
})

describe("IndexActivity through the daemon", () => {
  it.scoped("is a forwarded read: the daemon's client asks, a query worker answers", () =>
    Effect.gen(function* () {
      const { client } = yield* inProcessClient
      const answer = yield* client.IndexActivity({ days: 7 })
      expect(answer).toMatchObject({ days: [], skipped_files: [], skipped_total: 0 })
      // A day count out of bounds never leaves the client: the payload does not encode.
      const refused = yield* Effect.exit(client.IndexActivity({ days: 0 }))
      expect(Exit.isFailure(refused)).toBe(true)
      expect(String(refused)).toContain("between 1 and 366")
    })
  )
})
