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
const INSTALLATION = InstallationId.make("7a1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")

const temp = useTempDatabase("blctx-migration-7-")
const withDatabase = temp.withDatabase

const FORGET_TABLES = ["forget_tombstones", "forgotten_notes", "forgotten_spans"]

const rows = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM ${sql(table)} ORDER BY rowid`)

const tables = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'forget%' OR name LIKE 'forgotten%') ORDER BY name`
)

const ftsSecureDelete = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ v: number }>`SELECT v FROM chunks_fts_config WHERE k = 'secure-delete'`
)

const accepted = (statement: Effect.Effect<unknown, unknown>) =>
  statement.pipe(
    Effect.as(true),
    Effect.catchAll(() => Effect.succeed(false))
  )

describe("migration 7 (forget)", () => {
  it.effect("creates the tombstone tables and turns on FTS5 secure-delete in a fresh database", () =>
    withDatabase(
      Effect.gen(function* () {
        yield* initializeDatabase("context.db", INSTALLATION)
        expect((yield* readIdentity("context.db")).schemaVersion).toBe(CURRENT_SCHEMA_VERSION)
        expect(CURRENT_SCHEMA_VERSION).toBeGreaterThanOrEqual(7)
        expect((yield* tables).map((t) => t.name)).toEqual(FORGET_TABLES)
        expect(yield* ftsSecureDelete).toEqual([{ v: 1 }])
      })
    ).pipe(Effect.provide(MigrationTestLayer))
  )

  it.effect("upgrades a database built through 6 in place, its history untouched", () =>
    Effect.gen(function* () {
      const before = yield* withDatabase(
        Effect.gen(function* () {
          yield* migrateThrough(6)
          yield* importOnce(NodePath.join(history, "session-1.jsonl"))
          return { messages: yield* rows("messages"), chunks: yield* rows("chunks") }
        })
      )
      expect(before.messages.length).toBeGreaterThan(0)
      yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* initializeDatabase("context.db", INSTALLATION)
          expect((yield* readIdentity("context.db")).schemaVersion).toBe(CURRENT_SCHEMA_VERSION)
          expect(yield* rows("messages")).toEqual(before.messages)
          expect(yield* rows("chunks")).toEqual(before.chunks)
          expect((yield* tables).map((t) => t.name)).toEqual(FORGET_TABLES)
          expect(yield* ftsSecureDelete).toEqual([{ v: 1 }])
          expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
        })
      )
    }).pipe(Effect.provide(MigrationTestLayer))
  )

  it.effect("keeps spans well-formed and tied to their source file and tombstone", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* initializeDatabase("context.db", INSTALLATION)
        yield* importOnce(NodePath.join(history, "session-1.jsonl"))
        const [file] = yield* sql<{ id: number }>`SELECT id FROM source_files`
        expect(
          yield* accepted(
            sql`INSERT INTO forget_tombstones ${sql.insert({ selector: "not json", counts: "{}", forgotten_at: "t" })}`
          )
        ).toBe(false)
        yield* sql`INSERT INTO forget_tombstones ${sql.insert({ selector: '{"kind":"file"}', counts: "{}", forgotten_at: "t" })}`
        const span = (over: Record<string, unknown>) =>
          sql`INSERT INTO forgotten_spans ${sql.insert({ source_file_id: file?.id ?? 0, byte_start: 0, byte_end: 10, tombstone_id: 1, ...over })}`
        expect(yield* accepted(span({}))).toBe(true)
        expect(yield* accepted(span({ byte_end: 0 }))).toBe(false)
        expect(yield* accepted(span({ byte_start: -1 }))).toBe(false)
        expect(yield* accepted(span({ tombstone_id: 99 }))).toBe(false)
        expect(yield* accepted(span({ source_file_id: 999_999 }))).toBe(false)
      })
    ).pipe(Effect.provide(MigrationTestLayer))
  )
})
