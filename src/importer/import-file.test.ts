import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as V8 from "node:v8"
import * as Vm from "node:vm"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FsError, SafeFs } from "../fs/safe-fs.js"
import { TranscriptFiles } from "../transcripts/transcript-files.js"
import { fixturesDir, importOnce, makeTempDir, withHistoryDb, writeTranscript } from "./history-db.test-support.js"
import { prepareFile } from "./import-file.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-import-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const withDb = <A, E>(use: Parameters<typeof withHistoryDb<A, E>>[1]) => withHistoryDb(dir, use)
const fixtures = fixturesDir

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).pipe(Effect.map((r) => r[0]?.n ?? 0))
  )

const copyFixture = (name: string, to = name) => {
  const target = NodePath.join(dir, to)
  Fs.mkdirSync(NodePath.dirname(target), { recursive: true })
  Fs.copyFileSync(NodePath.join(fixtures, name), target)
  return target
}

describe("prepareFile", () => {
  it.effect("imports the classifier's selected messages with provenance, then skips the unchanged file", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("new-format-turn-ids.jsonl")
        const first = yield* importOnce(path)
        expect(first.status).toBe("imported")
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{
          role: string
          kind: string
          text: string
          line: number
          turn_id: string
          session_id: string
          cwd: string
        }>`
          SELECT role, kind, text, line, turn_id, session_id, cwd FROM messages ORDER BY line`
        expect(rows.map((r) => [r.kind, r.text])).toEqual([
          ["request", "Fix the failing date test."],
          ["commentary", "Looking at the test first."],
          ["final_answer", "The test assumed UTC; it now sets the zone explicitly and passes."],
          ["request", "Commit it."],
          ["request", "Use a short message."],
          ["final_answer", 'Committed as "Fix date test time zone".']
        ])
        expect(rows[0]?.session_id).toBe("0199b000-0000-7000-8000-000000000002")
        expect(rows[0]?.cwd).toBe("/home/dev/project")
        expect(rows[3]?.turn_id).toBe("0199b000-0000-7000-8000-0000000000a2")
        expect(yield* count("chunks")).toBe(6)
        const second = yield* importOnce(path)
        expect(second.status).toBe("unchanged")
        expect(second.counts.bytes_parsed).toBeUndefined()
        expect(yield* count("messages")).toBe(6)
      })
    )
  )

  it.effect("an append reads only the last turn and the new bytes, and adds only new messages", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("new-format-turn-ids.jsonl")
        yield* importOnce(path)
        const sql = yield* SqlClient.SqlClient
        const before = yield* sql<{ id: number }>`SELECT id FROM messages ORDER BY id`
        const sizeBefore = Fs.statSync(path).size
        const appended = [
          {
            timestamp: "2026-03-01T10:01:00.000Z",
            type: "event_msg",
            payload: { type: "task_started", turn_id: "t3" }
          },
          {
            timestamp: "2026-03-01T10:01:01.000Z",
            type: "event_msg",
            payload: { type: "user_message", message: "Now push it.", images: [] }
          },
          {
            timestamp: "2026-03-01T10:01:02.000Z",
            type: "event_msg",
            payload: { type: "agent_message", message: "Pushed to origin.", phase: "final_answer" }
          }
        ]
        Fs.appendFileSync(path, `${appended.map((l) => JSON.stringify(l)).join("\n")}\n`)
        const report = yield* importOnce(path)
        expect(report.status).toBe("appended")
        expect(report.counts.messages_added).toBe(2)
        expect(report.counts.bytes_parsed).toBeLessThan(Fs.statSync(path).size)
        expect(report.counts.bytes_parsed).toBeGreaterThanOrEqual(Fs.statSync(path).size - sizeBefore)
        const after = yield* sql<{
          id: number
          text: string
          turn_number: number
        }>`SELECT id, text, turn_number FROM messages ORDER BY id`
        expect(after.slice(0, before.length).map((r) => r.id)).toEqual(before.map((r) => r.id))
        expect(after.map((r) => r.text).slice(-2)).toEqual(["Now push it.", "Pushed to origin."])
        expect(after.at(-1)?.turn_number).toBeGreaterThan(after[0]?.turn_number ?? 0)
      })
    )
  )

  it.effect("a rewritten file is reparsed: removed messages go, unchanged ones keep their rows", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("new-format-turn-ids.jsonl")
        yield* importOnce(path)
        const sql = yield* SqlClient.SqlClient
        const kept = yield* sql<{ id: number }>`SELECT id FROM messages WHERE text = 'Fix the failing date test.'`
        const lines = Fs.readFileSync(path, "utf8").split("\n")
        const edited = lines.map((l) => l.replace("Use a short message.", "Use a long message."))
        Fs.writeFileSync(path, edited.join("\n"))
        const report = yield* importOnce(path)
        expect(report.status).toBe("imported")
        expect(report.counts.messages_removed).toBe(1)
        expect(report.counts.messages_added).toBe(1)
        const texts = (yield* sql<{ text: string }>`SELECT text FROM messages`).map((r) => r.text)
        expect(texts).toContain("Use a long message.")
        expect(texts).not.toContain("Use a short message.")
        const still = yield* sql<{ id: number }>`SELECT id FROM messages WHERE text = 'Fix the failing date test.'`
        expect(still).toEqual(kept)
        expect(yield* count("messages")).toBe(6)
      })
    )
  )

  it.effect("a session moved to archived_sessions keeps its rows; a second live copy is a conflict", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("new-format-turn-ids.jsonl", "sessions/2026/03/01/rollout-a.jsonl")
        yield* importOnce(path)
        const archived = NodePath.join(dir, "archived_sessions", "rollout-a.jsonl")
        Fs.mkdirSync(NodePath.dirname(archived), { recursive: true })
        Fs.renameSync(path, archived)
        const moved = yield* importOnce(archived)
        expect(moved.counts.files_moved).toBe(1)
        expect(yield* count("messages")).toBe(6)
        expect(yield* count("source_files")).toBe(1)
        const copy = copyFixture("new-format-turn-ids.jsonl", "sessions/copy.jsonl")
        const conflict = yield* importOnce(copy)
        expect(conflict.status).toBe("conflict")
        expect(conflict.note).toContain(archived)
        expect(yield* count("messages")).toBe(6)
      })
    )
  )

  it.effect("secrets are redacted before they are stored, and counted", () =>
    withDb(
      Effect.gen(function* () {
        const path = NodePath.join(dir, "secret.jsonl")
        const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
        Fs.writeFileSync(
          path,
          `${[
            {
              timestamp: "2026-03-02T09:00:00Z",
              type: "session_meta",
              payload: { id: "0199c000-0000-7000-8000-000000000009", cwd: "/w" }
            },
            {
              timestamp: "2026-03-02T09:00:01Z",
              type: "event_msg",
              payload: { type: "user_message", message: `use ${secret} to push` }
            },
            {
              timestamp: "2026-03-02T09:00:02Z",
              type: "event_msg",
              payload: { type: "agent_message", message: "Done; password=hunter2hunter2 was not needed." }
            }
          ]
            .map((l) => JSON.stringify(l))
            .join("\n")}\n`
        )
        const report = yield* importOnce(path)
        expect(report.counts.redactions).toBe(2)
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ text: string }>`SELECT text FROM messages UNION ALL SELECT text FROM chunks`
        expect(stored.length).toBe(4)
        for (const row of stored) {
          expect(row.text).not.toContain(secret)
          expect(row.text).not.toContain("hunter2hunter2")
        }
      })
    )
  )

  it.effect("a missing file is reported, not fatal", () =>
    withDb(
      Effect.gen(function* () {
        const report = yield* importOnce(NodePath.join(dir, "nope.jsonl"))
        expect(report.status).toBe("missing")
        expect(report.counts.files_missing).toBe(1)
      })
    )
  )

  it.effect("a stored source that cannot be looked at (EACCES) is never taken as gone", () =>
    withDb(
      Effect.gen(function* () {
        const original = copyFixture("new-format-turn-ids.jsonl", "sessions/rollout-a.jsonl")
        yield* importOnce(original)
        // Same inode and same session under another path: were the original taken as gone, its
        // row would be adopted as a move. A refusal to look is not absence: it is a conflict.
        const link = NodePath.join(dir, "archived_sessions", "rollout-a.jsonl")
        Fs.mkdirSync(NodePath.dirname(link), { recursive: true })
        Fs.linkSync(original, link)
        const fs = yield* SafeFs
        const report = yield* importOnce(link).pipe(
          Effect.provideService(SafeFs, {
            ...fs,
            lstat: (path) =>
              path === original
                ? Effect.fail(new FsError({ op: "lstat", path, code: "EACCES", message: "permission denied" }))
                : fs.lstat(path),
            exists: (path) => (path === original ? Effect.succeed(false) : fs.exists(path))
          })
        )
        expect(report.status).toBe("conflict")
        expect(report.counts.files_moved).toBeUndefined()
        expect(report.note).toContain(original)
        expect(yield* count("source_files")).toBe(2)
        expect(yield* count("messages")).toBe(6)
      })
    )
  )
})

describe("prepareFile streams", () => {
  // Measures what stays reachable: a full collection before each read, so garbage does not count.
  V8.setFlagsFromString("--expose-gc")
  const gc = Vm.runInNewContext("gc") as () => void
  const MiB = 1024 * 1024

  it.effect(
    "what it keeps while reading does not grow with the records read (tool output is never held)",
    () =>
      withDb(
        Effect.gen(function* () {
          // 48 MiB of tool output between a request and its answer. Collected before being
          // classified (as the importer once did), every record would still be reachable at
          // the last read: the heap would grow by at least those 48 MiB.
          const outputs = 48
          const lines: Array<unknown> = [
            { type: "session_meta", payload: { id: "0199c000-0000-7000-8000-00000000000b", cwd: "/w" } },
            { type: "event_msg", payload: { type: "user_message", message: "summarise the logs" } }
          ]
          for (let i = 0; i < outputs; i++) {
            const output = `${String(i).padStart(8, "0")} ${"log line with some words in it. ".repeat(MiB / 32)}`
            lines.push({ type: "response_item", payload: { type: "function_call_output", call_id: `c${i}`, output } })
          }
          lines.push({ type: "event_msg", payload: { type: "agent_message", message: "done", phase: "final_answer" } })
          const path = writeTranscript(NodePath.join(dir, "big.jsonl"), lines)
          const size = Fs.statSync(path).size
          expect(size).toBeGreaterThan(outputs * MiB)

          const heap: Array<number> = []
          const live = yield* TranscriptFiles
          const report = yield* importOnce(path).pipe(
            Effect.provideService(TranscriptFiles, {
              open: (p) =>
                Effect.map(live.open(p), (handle) => ({
                  ...handle,
                  readInto: (position, buffer) =>
                    Effect.suspend(() => {
                      gc()
                      heap.push(process.memoryUsage().heapUsed)
                      return handle.readInto(position, buffer)
                    })
                }))
            })
          )
          expect(report.status).toBe("imported")
          expect(report.counts).toMatchObject({ records: outputs + 3, messages_added: 2 })
          // One read per MiB: the reads were interleaved with the classification, and what was
          // reachable at any read stayed within a few MiB of what was reachable at the first.
          expect(heap.length).toBeGreaterThanOrEqual(outputs)
          const growth = Math.max(...heap) - (heap[0] ?? 0)
          expect(growth).toBeLessThan(12 * MiB)
        })
      ),
    60_000
  )

  it.effect("messages inside a forgotten span are never stored again; messages outside it are", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("new-format-turn-ids.jsonl")
        yield* importOnce(path)
        const sql = yield* SqlClient.SqlClient
        // Forget the first turn as a confirmed forget leaves it: rows gone, the span recorded.
        const first = yield* sql<{ source_file_id: number; byte_start: number; byte_end: number }>`
          SELECT source_file_id, byte_start, byte_end FROM messages WHERE turn_number = 1 ORDER BY byte_start`
        const [tombstone] = yield* sql<{ id: number }>`INSERT INTO forget_tombstones (selector, counts, forgotten_at)
                                                      VALUES ('{}', '{}', '2026-03-02T00:00:00Z') RETURNING id`
        yield* sql`INSERT INTO forgotten_spans ${sql.insert({
          source_file_id: first[0]?.source_file_id ?? 0,
          byte_start: first[0]?.byte_start ?? 0,
          byte_end: first.at(-1)?.byte_end ?? 0,
          tombstone_id: tombstone?.id ?? 0
        })}`
        yield* sql`DELETE FROM messages WHERE turn_number = 1`
        // Rewritten (a later message edited): reparsed whole; the forgotten turn stays out.
        Fs.writeFileSync(path, Fs.readFileSync(path, "utf8").replaceAll("Use a short message.", "Use a terse message."))
        const report = yield* importOnce(path)
        expect(report.status).toBe("imported")
        expect(report.counts.messages_forgotten).toBe(first.length)
        const texts = (yield* sql<{ text: string }>`SELECT text FROM messages ORDER BY byte_start`).map((r) => r.text)
        expect(texts).toEqual(["Commit it.", "Use a terse message.", 'Committed as "Fix date test time zone".'])
      })
    )
  )

  it.effect("a forget committed between reading a file and writing it is not undone by that write", () =>
    withDb(
      Effect.gen(function* () {
        const path = copyFixture("new-format-turn-ids.jsonl")
        yield* importOnce(path)
        const sql = yield* SqlClient.SqlClient
        Fs.writeFileSync(path, Fs.readFileSync(path, "utf8").replaceAll("Use a short message.", "Use a terse message."))
        const prepared = yield* Effect.scoped(prepareFile(path))
        expect(prepared.report.counts.messages_added).toBe(1)
        // Meanwhile the whole file is forgotten.
        const [file] = yield* sql<{ id: number; size: number }>`SELECT id, size FROM source_files`
        const [tombstone] = yield* sql<{ id: number }>`INSERT INTO forget_tombstones (selector, counts, forgotten_at)
                                                      VALUES ('{}', '{}', '2026-03-02T00:00:00Z') RETURNING id`
        yield* sql`INSERT INTO forgotten_spans ${sql.insert({
          source_file_id: file?.id ?? 0,
          byte_start: 0,
          byte_end: file?.size ?? 1,
          tombstone_id: tombstone?.id ?? 0
        })}`
        yield* sql`DELETE FROM messages`
        yield* sql.withTransaction(prepared.write)
        expect(yield* count("messages")).toBe(0)
        expect(yield* count("chunks")).toBe(0)
      })
    )
  )
})
