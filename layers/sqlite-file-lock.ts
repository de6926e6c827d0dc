import { createRequire } from "node:module"
import { Data, Effect, Option } from "effect"

/** The two calls a lock needs from better-sqlite3 (which ships no type declarations). */
interface LockDatabase {
  exec(sql: string): void
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options: { readonly timeout: number }
) => LockDatabase

const codeOf = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "UNKNOWN"

export class FileLockError extends Data.TaggedError("FileLockError")<{
  readonly lockFile: string
  readonly message: string
}> {}

/** A held lock; `release` is idempotent. */
export interface HeldLock {
  readonly release: Effect.Effect<void>
}

/**
 * Tries once to take an exclusive lock on `lockFile`: an open SQLite EXCLUSIVE transaction on a
 * small lock database. SQLite takes POSIX advisory (fcntl) locks, which the kernel releases when
 * the process exits or is killed, so a crash never leaves the lock held. None when another
 * process holds it (busy timeout 0: never waits inside SQLite, so callers poll on Effect time).
 */
export const tryExclusiveLock = (lockFile: string): Effect.Effect<Option.Option<HeldLock>, FileLockError> =>
  Effect.try({
    try: () => {
      const db = new Database(lockFile, { timeout: 0 })
      try {
        db.exec("BEGIN EXCLUSIVE")
      } catch (error) {
        db.close()
        throw error
      }
      let open = true
      const release = Effect.sync(() => {
        if (open) db.close()
        open = false
      })
      return Option.some<HeldLock>({ release })
    },
    catch: (error) => error
  }).pipe(
    Effect.catchAll((error) =>
      codeOf(error) === "SQLITE_BUSY" || codeOf(error) === "SQLITE_LOCKED"
        ? Effect.succeed(Option.none<HeldLock>())
        : Effect.fail(new FileLockError({ lockFile, message: error instanceof Error ? error.message : String(error) }))
    )
  )
