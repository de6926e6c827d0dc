import { Migrator, SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { InstallationId } from "../domain/installation-id.js"
import { stampRulesVersionWhenEmpty } from "../redaction/rules-version.js"
import { countOf, firstRowOf, MetaRow, rowsOf } from "../sql/sql-rows.js"
import { MIGRATIONS_TABLE, migrations } from "./migrations.js"
import { StoreError } from "./store-error.js"

/** Who a database belongs to and which schema it has. */
export interface DatabaseIdentity {
  readonly installationId: Option.Option<InstallationId>
  readonly schemaVersion: number
}

const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: MIGRATIONS_TABLE
})

/**
 * Brings a database to the current schema and stamps it with its installation id (once), and a new
 * one with the redaction rules version (an older database is redacted again by the daemon).
 */
export const initializeDatabase = (path: string, installationId: InstallationId) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* runMigrations
    yield* sql`INSERT INTO meta (key, value) VALUES ('installation_id', ${installationId})
               ON CONFLICT (key) DO NOTHING`
    yield* stampRulesVersionWhenEmpty
  }).pipe(
    Effect.mapError((error) => new StoreError({ path, message: `could not initialise the schema: ${String(error)}` }))
  )

const decodeId = Schema.decodeUnknownOption(InstallationId)
const tableRows = rowsOf(Schema.Struct({ name: Schema.String }))
const metaValue = firstRowOf(MetaRow)

/** Reads identity without changing anything; a file that is not a blctx database says so. */
export const readIdentity = (path: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* tableRows(sql`SELECT name FROM sqlite_master WHERE type = 'table'`)
    const names = new Set(tables.map((t) => t.name))
    if (!names.has(MIGRATIONS_TABLE) || !names.has("meta")) {
      return { installationId: Option.none(), schemaVersion: 0 } satisfies DatabaseIdentity
    }
    const version = yield* countOf(sql`SELECT max(migration_id) AS n FROM ${sql(MIGRATIONS_TABLE)}`)
    const id = yield* metaValue(sql`SELECT value FROM meta WHERE key = 'installation_id'`)
    return {
      installationId: Option.flatMap(id, (row) => decodeId(row.value)),
      schemaVersion: version
    } satisfies DatabaseIdentity
  }).pipe(Effect.mapError((error) => new StoreError({ path, message: `not a readable SQLite database: ${error}` })))
