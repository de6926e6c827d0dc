import { Reactivity } from "@effect/experimental"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { SqliteOpener } from "../src/store/sqlite-opener.js"
import { StoreError } from "../src/store/store-error.js"

/** better-sqlite3 through @effect/sql-sqlite-node. Read-only opens never touch the journal mode. */
export const SqliteOpenerLive = Layer.succeed(SqliteOpener, {
  open: ({ filename, readonly }) =>
    SqliteClient.make({ filename, readonly, disableWAL: readonly }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.catchAllDefect((defect) =>
        Effect.fail(
          new StoreError({ path: filename, message: defect instanceof Error ? defect.message : String(defect) })
        )
      )
    )
})
