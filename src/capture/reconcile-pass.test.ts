import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { fixturesDir, importOnce, makeTempDir, withHistoryDb } from "../importer/history-db.test-support.js"
import { readCaptureCounts } from "../retrieval/capture-counts.js"
import { makeCaptureStore } from "./capture-drain-store.js"
import type { CaptureRecord } from "./capture-record.js"
import { reconcileBindings } from "./reconcile-pass.js"

const GENERATION = "0a0b0c0d-1e1f-4a2b-8c3d-4e5f6a7b8c9d"

const record = (bindingKey: string, transcriptPath: string): CaptureRecord => ({
  v: 1,
  installation_id: "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b",
  generation: GENERATION,
  agent: "codex",
  agent_home: "/home/a/.codex",
  event: "Stop",
  event_session_id: `session-${bindingKey.slice(0, 4)}`,
  binding_key: bindingKey,
  session_uuid: "3c3c3c3c-4d4d-4e5e-8f6f-7a7a7a7a7a7a",
  turn_id: null,
  cwd: "/home/a/project",
  transcript_path: transcriptPath,
  received_at: "2026-03-01T10:00:00.000Z"
})

const REAL = "1a1a1a1a-1b1b-4c1c-8d1d-1e1e1e1e1e1e"
const LINK = "2a2a2a2a-2b2b-4c2c-8d2d-2e2e2e2e2e2e"
const GONE = "3a3a3a3a-3b3b-4c3c-8d3d-3e3e3e3e3e3e"

const states = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ binding_key: string; state: string; last_error: string | null }>`
    SELECT binding_key, state, last_error FROM capture_bindings ORDER BY binding_key`
)

describe("reconciling captured transcripts with the index", () => {
  it.effect("queues changed transcripts once, waits for the import, and names what cannot be indexed", () => {
    const dir = makeTempDir("blctx-reconcile-")
    const real = NodePath.join(dir, "rollout-real.jsonl")
    Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), real)
    const link = NodePath.join(dir, "rollout-link.jsonl")
    Fs.symlinkSync(real, link)
    const gone = NodePath.join(dir, "rollout-gone.jsonl")
    return withHistoryDb(
      dir,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const store = makeCaptureStore({ sql, database: "context.db" })
        yield* store.recordCapture("1-1-a.json", record(REAL, real))
        yield* store.recordCapture("2-1-b.json", record(LINK, link))
        yield* store.recordCapture("3-1-c.json", record(GONE, gone))

        const submitted: Array<ReadonlyArray<string>> = []
        let jobs = 0
        const submit = (paths: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            submitted.push(paths)
            const id = `00000000-0000-4000-8000-00000000000${++jobs}`
            yield* sql`INSERT INTO jobs (id, kind, params, state, submitted_at, updated_at)
              VALUES (${id}, 'import', '{}', 'queued', '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z')`
            return id
          }).pipe(Effect.orDie)
        const reconcile = reconcileBindings("context.db", submit)

        const first = yield* reconcile
        // A transcript the agent has not written yet is waited for, not an error.
        expect(first).toMatchObject({ submitted: [real], indexed: 0, waiting: 1, errors: 1 })
        expect(yield* states).toEqual([
          { binding_key: REAL, state: "pending", last_error: null },
          { binding_key: LINK, state: "error", last_error: `${link} is a symbolic link, which blctx never follows` },
          { binding_key: GONE, state: "pending", last_error: null }
        ])

        // The import is still queued: nothing is queued again.
        expect(yield* reconcile).toMatchObject({ submitted: [], waiting: 2 })

        // The import ran: the index holds the file as it is.
        yield* importOnce(real)
        yield* sql`UPDATE jobs SET state = 'completed'`
        expect(yield* reconcile).toMatchObject({ submitted: [], indexed: 1 })
        const counts = yield* readCaptureCounts({ generations: [GENERATION] })
        expect(counts).toMatchObject({ indexed_sessions: 1, pending: 1, errors: 1 })

        // The session went on (no event needed): queued again.
        Fs.appendFileSync(real, `${Fs.readFileSync(real, "utf8").split("\n")[0]}\n`)
        expect(yield* reconcile).toMatchObject({ submitted: [real] })
        expect(submitted).toEqual([[real], [real]])
        // The transcript is only ever read.
        expect(Fs.lstatSync(link).isSymbolicLink()).toBe(true)
        // A transcript that was there and went is an error.
        Fs.rmSync(real)
        yield* sql`UPDATE jobs SET state = 'completed'`
        expect(yield* reconcile).toMatchObject({ submitted: [], errors: 2 })
        expect((yield* states)[0]).toEqual({
          binding_key: REAL,
          state: "error",
          last_error: `${real} no longer exists`
        })
      })
    ).pipe(Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))))
  })
})
