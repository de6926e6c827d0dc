import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { inProcessClient } from "./daemon-core.test-support.js"

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  path: string
) => { prepare: (sql: string) => { run: (...args: Array<unknown>) => unknown }; close: () => void }

const fixture = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "codex", "new-format-turn-ids.jsonl")

/** Real time passing (the test clock stands still): lets the daemon's fibers and the import run. */
const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

describe("blctxd retries skipped imports", () => {
  it.scoped(
    "queues a file the importer skipped once its time comes, and the import clears it",
    () =>
      Effect.gen(function* () {
        const { client, paths } = yield* inProcessClient
        const transcript = NodePath.join(NodePath.dirname(paths.dataDir), "rollout-skipped.jsonl")
        Fs.copyFileSync(fixture, transcript)
        const stat = Fs.lstatSync(transcript)
        // The skip as the importer records it (a minute after the test clock's start).
        const db = new Database(paths.database)
        db.prepare(
          `INSERT INTO import_retries (path, size, mtime_ms, ino, attempts, next_retry_at, reason, skipped_at)
         VALUES (?, ?, ?, ?, 1, ?, 'interrupted twice; skipped', ?)`
        ).run(transcript, stat.size, stat.mtimeMs, stat.ino, new Date(60_000).toISOString(), new Date(0).toISOString())
        db.close()

        const before = yield* client.ContextStatus()
        expect(before.coverage.import_retries_waiting).toBe(1)
        expect(before.coverage.import_retries[0]).toMatchObject({ path: transcript, attempts: 1 })
        expect(before.coverage.files.indexed).toBe(0)

        yield* TestClock.adjust(Duration.seconds(30))
        for (let i = 0; i < 10; i++) yield* realPause
        expect((yield* client.ContextStatus()).coverage.files.total).toBe(0)

        yield* TestClock.adjust(Duration.seconds(30))
        let after = yield* client.ContextStatus()
        for (
          let i = 0;
          i < 3000 && (after.coverage.import_retries_waiting > 0 || after.coverage.files.indexed < 1);
          i++
        ) {
          yield* realPause
          after = yield* client.ContextStatus()
        }
        expect(after.coverage.files.indexed).toBe(1)
        expect(after.coverage.import_retries_waiting).toBe(0)
        expect(after.recent_jobs.some((j) => j.kind === "import")).toBe(true)
      }),
    120_000
  )
})
