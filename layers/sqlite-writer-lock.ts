import { Effect, Layer, Option } from "effect"
import { WriterLock, WriterLockError, WriterLockHeld } from "../src/daemon/writer-lock.js"
import { tryExclusiveLock } from "./sqlite-file-lock.js"

/**
 * The writer lock as an exclusive SQLite file lock on a small lock database (see
 * `tryExclusiveLock`): the kernel releases it however the daemon dies. A second taker fails
 * at once instead of waiting.
 */
export const SqliteWriterLockLive = Layer.succeed(WriterLock, {
  acquire: (lockFile) =>
    Effect.acquireRelease(
      tryExclusiveLock(lockFile).pipe(
        Effect.mapError((e) => new WriterLockError({ lockFile, message: e.message })),
        Effect.flatMap(
          Option.match({ onNone: () => Effect.fail(new WriterLockHeld({ lockFile })), onSome: Effect.succeed })
        )
      ),
      (held) => held.release
    ).pipe(Effect.asVoid)
})
