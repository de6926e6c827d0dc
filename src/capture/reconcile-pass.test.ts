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

const record = (bindingKey: string, transcriptPath: string, agentHome = "/home/a/.codex"): CaptureRecord => ({
  v: 1,
  installation_id: "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b",
  generation: GENERATION,
  agent: "codex",
  agent_home: agentHome,
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
    const home = NodePath.join(dir, "codex")
    const sessions = NodePath.join(home, "sessions", "2026", "03", "01")
    Fs.mkdirSync(sessions, { recursive: true })
    const real = NodePath.join(sessions, "rollout-real.jsonl")
    Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), real)
    const link = NodePath.join(sessions, "rollout-link.jsonl")
    Fs.symlinkSync(real, link)
    const gone = NodePath.join(sessions, "rollout-gone.jsonl")
    return withHistoryDb(
      dir,
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const store = makeCaptureStore({ sql, database: "context.db" })
        yield* store.recordCapture("1-1-a.json", record(REAL, real, home))
        yield* store.recordCapture("2-1-b.json", record(LINK, link, home))
        yield* store.recordCapture("3-1-c.json", record(GONE, gone, home))

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
          {
            binding_key: LINK,
            state: "error",
            last_error: `refused: ${link} is a symbolic link, which blctx never follows`
          },
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

  it.effect(
    "never reads a path outside the agent's transcript folders, reached through a link, or another user's",
    () => {
      const dir = makeTempDir("blctx-reconcile-")
      const home = NodePath.join(dir, "codex")
      const sessions = NodePath.join(home, "sessions")
      Fs.mkdirSync(NodePath.join(home, "archived_sessions"), { recursive: true })
      Fs.mkdirSync(sessions, { recursive: true })
      const elsewhere = NodePath.join(dir, "elsewhere")
      Fs.mkdirSync(elsewhere)
      const fixture = NodePath.join(fixturesDir, "new-format-turn-ids.jsonl")
      const outside = NodePath.join(elsewhere, "rollout-outside.jsonl")
      Fs.copyFileSync(fixture, outside)
      // A folder inside the sessions folder that links out of it.
      Fs.symlinkSync(elsewhere, NodePath.join(sessions, "2026"))
      const escaping = NodePath.join(sessions, "2026", "rollout-outside.jsonl")
      // Not normalized: the path as a payload could name it.
      const dotted = `${sessions}/../../elsewhere/rollout-outside.jsonl`
      const archived = NodePath.join(home, "archived_sessions", "rollout-archived.jsonl")
      Fs.copyFileSync(fixture, archived)
      const theirs = NodePath.join(sessions, "rollout-theirs.jsonl")
      Fs.copyFileSync(fixture, theirs)
      const asRoot = process.getuid?.() === 0
      if (asRoot) Fs.chownSync(theirs, 65_534, 65_534)
      const keys = [
        "4a4a4a4a-4b4b-4c4c-8d4d-4e4e4e4e4e4e",
        "5a5a5a5a-5b5b-4c5c-8d5d-5e5e5e5e5e5e",
        "6a6a6a6a-6b6b-4c6c-8d6d-6e6e6e6e6e6e",
        "7a7a7a7a-7b7b-4c7c-8d7d-7e7e7e7e7e7e",
        "8a8a8a8a-8b8b-4c8c-8d8d-8e8e8e8e8e8e"
      ] as const
      return withHistoryDb(
        dir,
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const store = makeCaptureStore({ sql, database: "context.db" })
          const paths = [outside, escaping, dotted, archived, theirs]
          for (const [i, path] of paths.entries()) {
            yield* store.recordCapture(`${i}-1-x.json`, record(keys[i] as string, path, home))
          }
          const submitted: Array<ReadonlyArray<string>> = []
          const submit = (paths: ReadonlyArray<string>) =>
            Effect.gen(function* () {
              submitted.push(paths)
              const id = "00000000-0000-4000-8000-000000000001"
              yield* sql`INSERT INTO jobs (id, kind, params, state, submitted_at, updated_at)
              VALUES (${id}, 'import', '{}', 'queued', '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z')`
              return id
            }).pipe(Effect.orDie)
          const outcome = yield* reconcileBindings("context.db", submit)
          // Only the archived transcript of one's own, inside the roots, is ever queued.
          expect(submitted).toEqual([[archived]])
          expect(outcome).toMatchObject({ refused: asRoot ? 4 : 3 })
          const byKey = new Map((yield* states).map((r) => [r.binding_key, r]))
          const roots = `${sessions}, ${NodePath.join(home, "archived_sessions")}`
          expect(byKey.get(keys[0])?.last_error).toBe(
            `refused: ${outside} is outside the Codex transcript folders (${roots})`
          )
          expect(byKey.get(keys[1])?.last_error).toBe(
            `refused: ${escaping} leads outside the Codex transcript folders (${roots}) through a link`
          )
          expect(byKey.get(keys[2])?.last_error).toBe(
            `refused: ${dotted} is outside the Codex transcript folders (${roots})`
          )
          expect(byKey.get(keys[3])?.state).toBe("pending")
          if (asRoot) {
            expect(byKey.get(keys[4])?.last_error).toBe(`refused: ${theirs} belongs to user 65534, not to you`)
          }
          const counts = yield* readCaptureCounts({ generations: [GENERATION] })
          expect(counts).toMatchObject({ refused: asRoot ? 4 : 3, errors: asRoot ? 4 : 3 })
          expect(counts.last_error).toMatch(/^refused: /)
        })
      ).pipe(Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))))
    }
  )
})
