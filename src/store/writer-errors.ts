import * as NodePath from "node:path"
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect, type ParseResult } from "effect"
import { freeBytes, isDiskFull } from "./disk-space.js"
import { StoreError } from "./store-error.js"

type StoreFailure = SqlError.SqlError | ParseResult.ParseError

const isStoreFailure = (e: unknown): e is StoreFailure =>
  typeof e === "object" && e !== null && "_tag" in e && (e._tag === "SqlError" || e._tag === "ParseError")

const freeOf = (database: string) => {
  const free = freeBytes(NodePath.dirname(database))
  return free === undefined ? "free space unknown" : `${free} bytes free`
}

export interface WriterErrorsOptions {
  /** The writer connection. */
  readonly sql: SqlClient.SqlClient
  /** The database file, named in every StoreError. */
  readonly database: string
  /** What a person does once space is freed ("call again", "import again"). */
  readonly afterFreeing?: string
}

/**
 * How the daemon's writer-side stores (notes, forgetting, the notes import, capture) report a
 * database failure: one `StoreError` naming the database, and for a full disk the free space left
 * and what to do. A full disk can also surface as a defect (SQLite's ROLLBACK failing after
 * SQLITE_FULL), which is mapped the same way; any other defect stays one.
 */
export const makeWriterErrors = ({ sql, database, afterFreeing = "call again" }: WriterErrorsOptions) => {
  const storeError = (what: string) => (e: { readonly message: string }) =>
    isDiskFull(e)
      ? new StoreError({
          path: database,
          diskFull: true,
          message: `the disk is full: ${what} (${freeOf(database)} on that filesystem); free space on ${NodePath.dirname(database)} and ${afterFreeing}`
        })
      : new StoreError({ path: database, message: `${what}: ${e.message}` })

  /** `work`'s database failures as StoreError; its own errors pass through. */
  const storeErrors =
    (what: string) =>
    <A, E, R>(work: Effect.Effect<A, E | StoreFailure, R>) =>
      work.pipe(
        Effect.catchAllDefect((defect) =>
          isDiskFull(defect) ? Effect.fail(storeError(what)(defect as Error)) : Effect.die(defect)
        ),
        Effect.catchIf(isStoreFailure, (e) => Effect.fail(storeError(what)(e)))
      ) as Effect.Effect<A, Exclude<E, StoreFailure> | StoreError, R>

  /** `work` as one transaction on the writer connection, its database failures as StoreError. */
  const transaction = <A, E, R>(what: string, work: Effect.Effect<A, E | StoreFailure, R>) =>
    storeErrors(what)(sql.withTransaction(work))

  return { storeError, storeErrors, transaction } as const
}
