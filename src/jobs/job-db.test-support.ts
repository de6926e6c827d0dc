import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { InstallationId } from "../domain/installation-id.js"
import { initializeDatabase } from "../store/identity.js"
import { SqliteOpener } from "../store/sqlite-opener.js"

/** Tests only: reads as the query workers do, on a separate read-only connection. */
export class Reader extends Context.Tag("test/Reader")<Reader, SqlClient.SqlClient>() {}

const TEST_INSTALLATION = InstallationId.make("6f1f3c3e-8f5e-4a57-9d3b-4d1c2f0e9a11")

/** Tests only: the writer's SqlClient on `database`, created and migrated as blctx does. */
export const migratedDatabase = (database: string) =>
  Layer.scoped(
    SqlClient.SqlClient,
    Effect.gen(function* () {
      const sql = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: false }))
      yield* initializeDatabase(database, TEST_INSTALLATION).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      return sql
    })
  ).pipe(Layer.provide(SqliteOpenerLive))

/** Tests only: a `Reader` on `database` (open it after `migratedDatabase` created it). */
export const readerOf = (database: string) =>
  Layer.scoped(
    Reader,
    Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: true }))
  ).pipe(Layer.provide(SqliteOpenerLive))
