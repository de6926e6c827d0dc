import { Context, Data, type Effect, type Scope } from "effect"

/** Another live process holds the data directory's writer lock. */
export class WriterLockHeld extends Data.TaggedError("WriterLockHeld")<{
  readonly lockFile: string
}> {}

export class WriterLockError extends Data.TaggedError("WriterLockError")<{
  readonly lockFile: string
  readonly message: string
}> {}

/**
 * The exclusive writer lock on a data directory, held for the life of the scope. The kernel
 * drops it when the process dies, however it dies, so a killed daemon never blocks the next.
 */
export class WriterLock extends Context.Tag("blctx/WriterLock")<
  WriterLock,
  {
    readonly acquire: (lockFile: string) => Effect.Effect<void, WriterLockHeld | WriterLockError, Scope.Scope>
  }
>() {}
