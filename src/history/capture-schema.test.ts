import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { InstallationId } from "../domain/installation-id.js"
import { importOnce } from "../importer/history-db.test-support.js"
import { initializeDatabase, readIdentity } from "../store/identity.js"
import { CURRENT_SCHEMA_VERSION } from "../store/migrations.js"
import { MigrationTestLayer, migrateThrough, useTempDatabase } from "./migration.test-support.js"

const history = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "history")
const INSTALLATION = InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")

const temp = useTempDatabase("blctx-migration-6-")
const withDatabase = temp.withDatabase

const CAPTURE_TABLES = ["capture_bindings", "capture_events", "capture_rejections"]

const rows = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM ${sql(table)} ORDER BY rowid`)

const tables = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'capture_%' ORDER BY name`
)

const accepted = (statement: Effect.Effect<unknown, unknown>) =>
  statement.pipe(
    Effect.as(true),
    Effect.catchAll(() => Effect.succeed(false))
  )

const binding = (over: Record<string, unknown> = {}) => ({
  binding_key: "b-1",
  session_uuid: "s-1",
  agent: "codex",
  agent_home: "/home/a/.codex",
  event_session_id: "e-1",
  generation: "g-1",
  cwd: "/home/a/project",
  transcript_path: "/home/a/.codex/sessions/x.jsonl",
  first_event_at: "2026-03-01T10:00:00.000Z",
  last_event_at: "2026-03-01T10:00:00.000Z",
  state: "pending",
  ...over
})

describe("migration 6 (capture)", () => {
  it.effect("creates the capture tables in a fresh database", () =>
    withDatabase(
      Effect.gen(function* () {
        yield* initializeDatabase("context.db", INSTALLATION)
        expect((yield* readIdentity("context.db")).schemaVersion).toBe(CURRENT_SCHEMA_VERSION)
        expect(CURRENT_SCHEMA_VERSION).toBeGreaterThanOrEqual(6)
        expect((yield* tables).map((t) => t.name)).toEqual(CAPTURE_TABLES)
      })
    ).pipe(Effect.provide(MigrationTestLayer))
  )

  it.effect("upgrades a database built through 5 in place, its history untouched", () =>
    Effect.gen(function* () {
      const before = yield* withDatabase(
        Effect.gen(function* () {
          yield* migrateThrough(5)
          yield* importOnce(NodePath.join(history, "session-1.jsonl"))
          return {
            version: (yield* readIdentity("context.db")).schemaVersion,
            messages: yield* rows("messages"),
            chunks: yield* rows("chunks"),
            files: yield* rows("source_files")
          }
        })
      )
      expect(before.version).toBe(5)
      expect(before.messages.length).toBeGreaterThan(0)
      yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* initializeDatabase("context.db", INSTALLATION)
          expect((yield* readIdentity("context.db")).schemaVersion).toBe(CURRENT_SCHEMA_VERSION)
          expect(yield* rows("messages")).toEqual(before.messages)
          expect(yield* rows("chunks")).toEqual(before.chunks)
          expect(yield* rows("source_files")).toEqual(before.files)
          expect((yield* tables).map((t) => t.name)).toEqual(CAPTURE_TABLES)
          expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
        })
      )
    }).pipe(Effect.provide(MigrationTestLayer))
  )

  it.effect("keys bindings by blctx's binding key, so a session can be bound again, and keeps rows consistent", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* initializeDatabase("context.db", INSTALLATION)
        const insert = (over: Record<string, unknown>) => sql`INSERT INTO capture_bindings ${sql.insert(binding(over))}`
        expect(yield* accepted(insert({}))).toBe(true)
        // The same agent session under a new key (a reinstall bound it again).
        expect(yield* accepted(insert({ binding_key: "b-2" }))).toBe(true)
        expect(yield* accepted(insert({ binding_key: "b-1" }))).toBe(false)
        for (const bad of [
          { binding_key: "b-3", state: "lost" },
          { binding_key: "b-3", transcript_path: null },
          { binding_key: "b-3", state: "awaiting_path" },
          { binding_key: "b-3", state: "error" },
          { binding_key: "b-3", last_error: "why" }
        ]) {
          expect(yield* accepted(insert(bad)), JSON.stringify(bad)).toBe(false)
        }
        expect(yield* accepted(insert({ binding_key: "b-3", transcript_path: null, state: "awaiting_path" }))).toBe(
          true
        )

        // An event names its binding, once per spool file; removing a binding removes its events.
        const event = (over: Record<string, unknown>) =>
          sql`INSERT INTO capture_events ${sql.insert({
            spool_file: "1-1-a.json",
            binding_key: "b-1",
            event: "Stop",
            turn_id: null,
            generation: "g-1",
            received_at: "2026-03-01T10:00:00.000Z",
            drained_at: "2026-03-01T10:00:01.000Z",
            ...over
          })}`
        expect(yield* accepted(event({ binding_key: "b-9" }))).toBe(false)
        expect(yield* accepted(event({}))).toBe(true)
        expect(yield* accepted(event({ binding_key: "b-2" }))).toBe(false)
        yield* sql`DELETE FROM capture_bindings WHERE binding_key = 'b-1'`
        expect(yield* rows("capture_events")).toEqual([])
      })
    ).pipe(Effect.provide(MigrationTestLayer))
  )
})
