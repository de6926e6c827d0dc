import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The schema, one migration per version. The highest id is the schema version this build
 * writes; a database at any other version is refused by verification until install migrates it.
 */
export const migrations = {
  "1_meta": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT`
  })
} satisfies Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>

export const CURRENT_SCHEMA_VERSION = Math.max(...Object.keys(migrations).map((k) => Number.parseInt(k, 10)))

export const MIGRATIONS_TABLE = "blctx_migrations"
