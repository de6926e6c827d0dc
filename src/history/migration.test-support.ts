import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Migrator, SqlClient } from "@effect/sql"
import { afterEach, beforeEach } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { makeTempDir, NoModelImport } from "../importer/history-db.test-support.js"
import { MIGRATIONS_TABLE, migrationsThrough } from "../store/migrations.js"
import { SqliteOpener } from "../store/sqlite-opener.js"

/** Tests only: what importing into a test database needs (no model). */
export const MigrationTestLayer = Layer.mergeAll(
  SqliteOpenerLive,
  NodeSafeFsLive,
  NodeTranscriptFilesLive,
  NoModelImport
)

/** Tests only: the schema a release left behind, migrations 1 to `version`. */
export const migrateThrough = (version: number) =>
  Migrator.make({})({ loader: Migrator.fromRecord(migrationsThrough(version)), table: MIGRATIONS_TABLE })

/**
 * Tests only: a fresh temp dir around each test of the calling file, and `withDatabase`, which
 * runs an effect on a read-write connection to its `context.db`.
 */
export const useTempDatabase = (prefix: string) => {
  let dir = ""
  beforeEach(() => {
    dir = makeTempDir(prefix)
  })
  afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))
  const withDatabase = <A, E, R>(use: Effect.Effect<A, E, R>) =>
    Effect.scoped(
      Effect.gen(function* () {
        const opener = yield* SqliteOpener
        const sql = yield* opener.open({ filename: NodePath.join(dir, "context.db"), readonly: false })
        return yield* Effect.provideService(use, SqlClient.SqlClient, sql)
      })
    )
  return { dir: () => dir, withDatabase }
}
