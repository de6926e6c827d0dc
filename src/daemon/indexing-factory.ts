import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, type Effect, type Scope } from "effect"
import type { IndexingServices } from "../vectors/import-services.js"

/**
 * Builds the daemon's indexing services on its writer connection, once the writer lock is held
 * (the vector tables live in that same database, so chunks and vectors commit together).
 */
export class IndexingFactory extends Context.Tag("blctx/IndexingFactory")<
  IndexingFactory,
  {
    readonly make: (writer: SqliteClient.SqliteClient) => Effect.Effect<
      {
        readonly indexing: IndexingServices["Type"]
        /** Vectors are in this daemon's SQLite file (vector tables), so query workers search them. */
        readonly embeddedVectors: boolean
      },
      never,
      Scope.Scope
    >
  }
>() {}
