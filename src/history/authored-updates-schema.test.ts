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

const temp = useTempDatabase("blctx-migration-5-")
const withDatabase = temp.withDatabase
const TestLayer = MigrationTestLayer
const migrateThrough4 = migrateThrough(4)

const rows = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM ${sql(table)} ORDER BY rowid`)

/** Whether a statement is accepted (the CHECKs and foreign keys decide). */
const accepted = (statement: Effect.Effect<unknown, unknown>) =>
  statement.pipe(
    Effect.as(true),
    Effect.catchAll(() => Effect.succeed(false))
  )

describe("migration 5 (authored updates)", () => {
  it.effect("upgrades a database built through 4 in place, its history untouched", () =>
    Effect.gen(function* () {
      const before = yield* withDatabase(
        Effect.gen(function* () {
          yield* migrateThrough4
          yield* importOnce(NodePath.join(history, "session-1.jsonl"))
          yield* importOnce(NodePath.join(history, "session-2.jsonl"))
          return {
            version: (yield* readIdentity("context.db")).schemaVersion,
            messages: yield* rows("messages"),
            chunks: yield* rows("chunks"),
            fts: yield* rows("chunks_fts")
          }
        })
      )
      expect(before.version).toBe(4)
      expect(before.messages.length).toBeGreaterThan(0)

      yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* initializeDatabase("context.db", INSTALLATION)
          expect((yield* readIdentity("context.db")).schemaVersion).toBe(CURRENT_SCHEMA_VERSION)
          expect(yield* rows("messages")).toEqual(before.messages)
          expect(yield* rows("chunks")).toEqual(before.chunks)
          expect(yield* rows("chunks_fts")).toEqual(before.fts)
          const tables = yield* sql<{ name: string }>`
            SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('context_sessions', 'authored_updates')
            ORDER BY name`
          expect(tables.map((t) => t.name)).toEqual(["authored_updates", "context_sessions"])
          expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
        })
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("ties each update to the message that carries its text, and refuses what does not fit", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* initializeDatabase("context.db", INSTALLATION)
        const session = { id: "s-1", binding_key: "b-1", project: "/p", parent_session_id: null, created_at: "t" }
        yield* sql`INSERT INTO context_sessions ${sql.insert(session)}`
        const note = (noteId: string) =>
          sql`INSERT INTO messages ${sql.insert({
            source_type: "authored_update",
            agent: null,
            note_id: noteId,
            note_revision: 1,
            session_id: "s-1",
            role: "assistant",
            kind: "note",
            text: "a note",
            text_sha256: "x",
            redactions: 0
          })}`
        const update = (over: Record<string, unknown>) =>
          sql`INSERT INTO authored_updates ${sql.insert({
            update_id: "u-1",
            note_id: "n-1",
            revision: 1,
            session_id: "s-1",
            kind: "note",
            authorship: "agent_generated",
            tags: "[]",
            source_text: null,
            source_text_sha256: null,
            content_sha256: "h",
            created_at: "t",
            ...over
          })}`

        // An update needs its message (the note revision), a known session, and valid fields.
        expect(yield* accepted(update({}))).toBe(false)
        yield* note("n-1")
        for (const bad of [
          { session_id: "s-unknown" },
          { revision: 2 },
          { kind: "thought" },
          { authorship: "model" },
          { tags: "not json" },
          { tags: '{"a":1}' },
          { source_text: "visible", source_text_sha256: null }
        ]) {
          expect(yield* accepted(update(bad)), JSON.stringify(bad)).toBe(false)
        }
        expect(yield* accepted(update({ tags: '["deploy"]' }))).toBe(true)
        // One row per update id and per note revision.
        expect(yield* accepted(update({ update_id: "u-2" }))).toBe(false)
        yield* note("n-2")
        expect(yield* accepted(update({ note_id: "n-2" }))).toBe(false)

        // Sessions: one per binding, a parent that exists.
        expect(yield* accepted(sql`INSERT INTO context_sessions ${sql.insert({ ...session, id: "s-2" })}`)).toBe(false)
        expect(
          yield* accepted(
            sql`INSERT INTO context_sessions ${sql.insert({ ...session, id: "s-3", binding_key: "b-3", parent_session_id: "s-9" })}`
          )
        ).toBe(false)
        expect(
          yield* accepted(
            sql`INSERT INTO context_sessions ${sql.insert({ ...session, id: "s-3", binding_key: "b-3", parent_session_id: "s-1" })}`
          )
        ).toBe(true)

        // Removing a note's message removes its update (tags, source_text) with it.
        yield* sql`DELETE FROM messages WHERE note_id = 'n-1'`
        expect(yield* rows("authored_updates")).toEqual([])
      })
    ).pipe(Effect.provide(TestLayer))
  )
})
