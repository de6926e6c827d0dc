import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, Effect, type Scope } from "effect"
import type { StoreError } from "./store-error.js"

export interface OpenOptions {
  readonly filename: string
  /** Read-only connections never change the file (verification, query workers). */
  readonly readonly: boolean
}

/** Opens a SQLite database file as an `SqlClient` for the life of a scope. */
export class SqliteOpener extends Context.Tag("blctx/SqliteOpener")<
  SqliteOpener,
  {
    /** A SQLite client: an `SqlClient` that can also load extensions (sqlite-vec, to migrate 0.1 vectors). */
    readonly open: (options: OpenOptions) => Effect.Effect<SqliteClient.SqliteClient, StoreError, Scope.Scope>
  }
>() {}

/** Runs `use` with a connection to `filename`, closed when it finishes. */
export const withDatabase = <A, E, R>(
  options: OpenOptions,
  use: Effect.Effect<A, E, R | SqlClient.SqlClient>
): Effect.Effect<A, E | StoreError, SqliteOpener | Exclude<R, SqlClient.SqlClient>> =>
  Effect.scoped(
    Effect.flatMap(SqliteOpener, (opener) =>
      Effect.flatMap(opener.open(options), (sql) => Effect.provideService(use, SqlClient.SqlClient, sql))
    )
  )
