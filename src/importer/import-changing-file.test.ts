import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { TranscriptFiles } from "../transcripts/transcript-files.js"
import { changeWhileRead } from "./changing-transcript-files.test-support.js"
import { importOnce, makeTempDir, withHistoryDb } from "./history-db.test-support.js"

/**
 * A transcript that changes while it is imported: truncated, rewritten in place, appended to,
 * replaced by a rename, moved away. The change happens between two reads of the importer's pass
 * (`changeWhileRead`), so the first records have been classified already. Each import ends with
 * a report saying what happened, stores no half line and nothing twice, and a later import of
 * the settled file holds exactly the settled file's messages.
 */

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-import-changing-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

const SESSION = "0199d000-0000-7000-8000-00000000000c"
const FILLER = "words to make the transcript span several reads of the importer. ".repeat(5)

/** Turns `[from, from + count)`: a request and its final answer each, `tag` in both texts. */
const turns = (tag: string, from: number, count: number): string => {
  let text = ""
  for (let i = from; i < from + count; i++) {
    const ask = { type: "event_msg", payload: { type: "user_message", message: `ask ${tag} ${i} ${FILLER}` } }
    const answer = {
      type: "event_msg",
      payload: { type: "agent_message", message: `answer ${tag} ${i} ${FILLER}`, phase: "final_answer" }
    }
    text += `${JSON.stringify(ask)}\n${JSON.stringify(answer)}\n`
  }
  return text
}

const meta = `${JSON.stringify({ type: "session_meta", payload: { id: SESSION, cwd: "/w" } })}\n`

/** A transcript of `count` turns: about 1 KiB each, so 600 of them take three reads. */
const transcript = (tag: string, count = 600) => meta + turns(tag, 0, count)

/** The messages a file's complete lines hold, in file order: what the index must hold. */
const messagesOf = (content: string): ReadonlyArray<string> =>
  content
    .split("\n")
    .slice(0, -1) // after the last newline: nothing, or a line not finished yet
    .map((line) => JSON.parse(line) as { payload: { type: string; message?: string } })
    .filter((r) => r.payload.type === "user_message" || r.payload.type === "agent_message")
    .map((r) => r.payload.message ?? "")

/** Written a minute ago, as a transcript being imported usually was: a change later shows in its mtime. */
const writeSettled = (path: string, content: string) => {
  Fs.writeFileSync(path, content)
  const past = new Date(Date.now() - 60_000)
  Fs.utimesSync(path, past, past)
  return path
}

/** Overwrites the file's bytes through the same inode, without truncating it first. */
const rewriteInPlace = (path: string, content: string) => Fs.writeFileSync(path, content, { flag: "r+" })

const storedTexts = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ text: string }>`SELECT text FROM messages ORDER BY byte_start`
).pipe(Effect.map((rows) => rows.map((r) => r.text)))

const sourceFileCount = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM source_files`
).pipe(Effect.map((rows) => rows[0]?.n ?? 0))

/** Imports `path` once while `change` happens after the first `afterReads` reads of it. */
const importWhileChanging = (path: string, change: () => void, afterReads = 1) =>
  Effect.gen(function* () {
    const { files, changed } = yield* changeWhileRead(path, change, afterReads)
    const report = yield* importOnce(path).pipe(Effect.provideService(TranscriptFiles, files))
    // The change did happen while the file was read, not after the import.
    expect(yield* Deferred.isDone(changed)).toBe(true)
    return report
  })

const withDb = <A, E>(use: Parameters<typeof withHistoryDb<A, E>>[1]) => withHistoryDb(dir, use)

describe("a transcript that changes while it is imported", () => {
  it.effect.each([
    { cut: "beyond what was read", at: 400 * 1024 },
    { cut: "inside what was read", at: 100 * 1024 }
  ])("(a) truncated mid-read, $cut, in the middle of a line: skipped, then the settled file is imported", ({ at }) =>
    withDb(
      Effect.gen(function* () {
        const full = transcript("alpha")
        const path = writeSettled(NodePath.join(dir, "truncated.jsonl"), full)
        const cutAt = full.indexOf("\n", at) - 20 // twenty bytes before a newline: half a line
        const report = yield* importWhileChanging(path, () => Fs.truncateSync(path, cutAt))
        expect(report.status).toBe("unreadable")
        expect(report.counts).toEqual({ files_unreadable: 1 })
        expect(report.note).toMatch(/became shorter while it was read/)
        expect(yield* storedTexts).toEqual([])
        expect(yield* sourceFileCount).toBe(0)

        // The settled file ends with half a line: its complete lines are imported, the half line is not.
        const settled = full.slice(0, cutAt)
        const later = yield* importOnce(path)
        expect(later.status).toBe("imported")
        expect(later.problem).toMatch(/truncated_line/)
        expect(yield* storedTexts).toEqual(messagesOf(settled))

        // Its writer finishes the line and goes on: the append completes it, nothing twice.
        Fs.appendFileSync(path, full.slice(cutAt) + turns("alpha", 600, 3))
        const finished = yield* importOnce(path)
        expect(finished.status).toBe("appended")
        expect(finished.problem).toBeUndefined()
        expect(yield* storedTexts).toEqual(messagesOf(Fs.readFileSync(path, "utf8")))
      })
    )
  )

  it.effect("(b) rewritten in place to the same size mid-read: skipped, then the new content is imported", () =>
    withDb(
      Effect.gen(function* () {
        const path = writeSettled(NodePath.join(dir, "same-size.jsonl"), transcript("alpha"))
        const rewritten = transcript("omega")
        expect(rewritten.length).toBe(Fs.statSync(path).size)
        const report = yield* importWhileChanging(path, () => rewriteInPlace(path, rewritten))
        expect(report.status).toBe("unreadable")
        expect(report.counts).toEqual({ files_unreadable: 1 })
        expect(report.note).toMatch(/rewritten while it was read/)
        expect(yield* storedTexts).toEqual([])

        const later = yield* importOnce(path)
        expect(later.status).toBe("imported")
        expect(yield* storedTexts).toEqual(messagesOf(rewritten))
      })
    )
  )

  it.effect("(b) an imported file rewritten larger in place while its append is read: skipped, then reconciled", () =>
    withDb(
      Effect.gen(function* () {
        const first = transcript("alpha")
        const path = writeSettled(NodePath.join(dir, "larger.jsonl"), first)
        yield* importOnce(path)
        expect(yield* storedTexts).toEqual(messagesOf(first))
        writeSettled(path, first + turns("alpha", 600, 2))

        // The append verifies the stored prefix (one read), then the rest is rewritten.
        const rewritten = transcript("omega", 700)
        const report = yield* importWhileChanging(path, () => rewriteInPlace(path, rewritten))
        expect(report.status).toBe("unreadable")
        expect(report.note).toMatch(/rewritten while it was read/)
        expect(yield* storedTexts).toEqual(messagesOf(first))

        const later = yield* importOnce(path)
        expect(later.status).toBe("imported")
        expect(yield* storedTexts).toEqual(messagesOf(rewritten))
      })
    )
  )

  it.effect(
    "(c) appended to mid-read, opened with half a line: the complete lines now, the rest by the next import",
    () =>
      withDb(
        Effect.gen(function* () {
          const full = transcript("alpha") + turns("alpha", 600, 5)
          const openedAt = full.indexOf("\n", 500 * 1024) - 20 // the writer is in the middle of a line
          const path = writeSettled(NodePath.join(dir, "growing.jsonl"), full.slice(0, openedAt))
          const report = yield* importWhileChanging(path, () => Fs.appendFileSync(path, full.slice(openedAt)))
          expect(report.status).toBe("imported")
          expect(report.problem).toMatch(/truncated_line/)
          expect(yield* storedTexts).toEqual(messagesOf(full.slice(0, openedAt)))

          const later = yield* importOnce(path)
          expect(later.status).toBe("appended")
          expect(later.problem).toBeUndefined()
          expect(yield* storedTexts).toEqual(messagesOf(full))
          expect(yield* sourceFileCount).toBe(1)
          expect((yield* importOnce(path)).status).toBe("unchanged")
        })
      )
  )

  it.effect("(d) replaced by a rename mid-read: skipped, then the new file is imported", () =>
    withDb(
      Effect.gen(function* () {
        const path = writeSettled(NodePath.join(dir, "replaced.jsonl"), transcript("alpha"))
        const replacement = transcript("omega", 650)
        const report = yield* importWhileChanging(path, () => {
          const next = `${path}.tmp`
          Fs.writeFileSync(next, replacement)
          Fs.renameSync(next, path)
        })
        expect(report.status).toBe("unreadable")
        expect(report.note).toMatch(/replaced by another file while it was read/)
        expect(yield* storedTexts).toEqual([])

        const later = yield* importOnce(path)
        expect(later.status).toBe("imported")
        expect(yield* storedTexts).toEqual(messagesOf(replacement))
      })
    )
  )

  it.effect("(d) moved away mid-read: skipped under its old name, imported once under its new one", () =>
    withDb(
      Effect.gen(function* () {
        const content = transcript("alpha")
        const path = writeSettled(NodePath.join(dir, "moved.jsonl"), content)
        const archived = NodePath.join(dir, "archived.jsonl")
        const report = yield* importWhileChanging(path, () => Fs.renameSync(path, archived))
        expect(report.status).toBe("unreadable")
        expect(report.note).toMatch(/removed or moved while it was read/)
        expect(yield* storedTexts).toEqual([])

        const later = yield* importOnce(archived)
        expect(later.status).toBe("imported")
        expect(yield* storedTexts).toEqual(messagesOf(content))
        expect(yield* sourceFileCount).toBe(1)
      })
    )
  )
})
