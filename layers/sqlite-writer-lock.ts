import { createRequire } from "node:module"
import { Effect, Layer } from "effect"
import { WriterLock, WriterLockError, WriterLockHeld } from "../src/daemon/writer-lock.js"

/** The two calls this lock needs from better-sqlite3 (which ships no type declarations). */
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

/**
 * The writer lock as an open SQLite EXCLUSIVE transaction on a small lock database. SQLite
 * takes POSIX advisory (fcntl) locks on the file, which the kernel releases when the process
 * exits or is killed, so a crash never leaves the lock held. A second taker fails at once
 * (busy timeout 0) instead of waiting.
 */
export const SqliteWriterLockLive = Layer.succeed(WriterLock, {
  acquire: (lockFile) =>
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new Database(lockFile, { timeout: 0 })
          try {
            db.exec("BEGIN EXCLUSIVE")
            return db
          } catch (error) {
            db.close()
            throw error
          }
        },
        catch: (error) =>
          codeOf(error) === "SQLITE_BUSY" || codeOf(error) === "SQLITE_LOCKED"
            ? new WriterLockHeld({ lockFile })
            : new WriterLockError({ lockFile, message: error instanceof Error ? error.message : String(error) })
      }),
      (db) => Effect.sync(() => db.close())
    ).pipe(Effect.asVoid)
})
