import { SqlClient, SqlError } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { Context, Effect, Layer, Option } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import { pidFileIn } from "../paths/daemon-files.js"
import { Paths } from "../paths/paths.js"
import { readIdentity } from "../store/identity.js"
import { CURRENT_SCHEMA_VERSION } from "../store/migrations.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { DaemonConfig } from "./daemon-config.js"
import { DaemonProcess } from "./daemon-process.js"
import { HeldFiles } from "./held-files.js"
import { startupError } from "./startup-checks.js"

/** The daemon's one writer connection, opened once it holds the writer lock. */
export class WriterDatabase extends Context.Tag("blctx/WriterDatabase")<
  WriterDatabase,
  {
    readonly sql: SqliteClient.SqliteClient
    readonly path: string
    readonly schemaVersion: number
  }
>() {}

/**
 * Every transaction on `sql` runs `guard` inside it, after its work and before COMMIT (holding the
 * connection, so nothing else commits in between), and again once committed: a write to a
 * database no longer at its path rolls back, and one whose file was swapped during the commit is
 * not confirmed either. @effect/sql gives a client no hook around transactions, so the one
 * `withTransaction` of the writer connection (every writer transaction's path: notes, forgetting,
 * the notes import, job submission and job steps) is replaced in place; this connection is the
 * daemon's own.
 */
export const guardTransactions = (sql: SqliteClient.SqliteClient, guard: Effect.Effect<void, SqlError.SqlError>) => {
  const unguarded = sql.withTransaction
  const withTransaction: SqlClient.SqlClient["withTransaction"] = (effect) =>
    unguarded(Effect.zipLeft(effect, guard)).pipe(Effect.zipLeft(guard))
  return Object.assign(sql, { withTransaction })
}

/**
 * Opens the database for writing, checks it belongs to this installation at this build's schema
 * version, and records the daemon's PID (removed again on shutdown if still ours). Provides the
 * connection as `SqlClient` too, for the job store and the kinds that write.
 */
export const WriterDatabaseLive = Layer.scopedContext(
  Effect.gen(function* () {
    const args = yield* DaemonConfig
    const paths = yield* Paths
    const fs = yield* SafeFs
    const process = yield* DaemonProcess
    const held = yield* HeldFiles
    const opened = yield* Effect.flatMap(SqliteOpener, (opener) =>
      opener.open({ filename: paths.database, readonly: false })
    ).pipe(
      Effect.mapError((e) =>
        startupError(`cannot open ${e.path}: ${e.message}`, "Run: blctx doctor --step data_directory")
      )
    )
    // What the connection opened: the database, then the WAL its first read opened (SQLite keeps it
    // while the connection lives, so it is the same file for the daemon's life). Recorded right
    // after opening and checked against the paths before every commit.
    yield* held.hold("database", paths.database)
    const sql = guardTransactions(
      opened,
      held.check.pipe(Effect.mapError((e) => new SqlError.SqlError({ cause: e, message: e.message })))
    )
    // Freed pages are zeroed as they are freed, for the connection's life: forgotten text does not
    // linger in free pages or WAL frames between a forget and its VACUUM.
    yield* sql`PRAGMA secure_delete = ON`.pipe(
      Effect.mapError((e) => startupError(`cannot configure ${paths.database}: ${e.message}`, "Run: blctx doctor"))
    )
    const identity = yield* readIdentity(paths.database).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.mapError((e) => startupError(`${e.path}: ${e.message}`, "Run: blctx doctor --step data_directory"))
    )
    if (identity.schemaVersion !== CURRENT_SCHEMA_VERSION) {
      return yield* startupError(
        `${paths.database} has schema version ${identity.schemaVersion}; this blctxd needs ${CURRENT_SCHEMA_VERSION}`,
        "Run: blctx install codex (it migrates the database)"
      )
    }
    if (Option.getOrNull(identity.installationId) !== args["installation-id"]) {
      return yield* startupError(
        `${paths.database} belongs to installation ${Option.getOrElse(identity.installationId, () => "none")}, not ${args["installation-id"]}`,
        "Run: blctx doctor --step data_directory"
      )
    }

    yield* held.hold("database WAL", `${paths.database}-wal`)

    const pidFile = pidFileIn(paths.stateDir)
    const pidText = `${process.pid}\n`
    yield* fs
      .writeAtomic(pidFile, pidText, 0o600)
      .pipe(Effect.mapError((e) => startupError(`cannot write ${pidFile}: ${e.code}`, "Check the state directory.")))
    yield* held.hold("pidfile", pidFile)
    yield* Effect.addFinalizer(() =>
      fs.readText(pidFile).pipe(
        Effect.flatMap((text) => (text === pidText ? fs.removeFile(pidFile) : Effect.void)),
        Effect.ignore
      )
    )
    return Context.make(WriterDatabase, { sql, path: paths.database, schemaVersion: identity.schemaVersion }).pipe(
      Context.add(SqlClient.SqlClient, sql)
    )
  })
)
