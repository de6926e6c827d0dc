import { Data } from "effect"

/** The database could not be opened, read or written. Names the file so a person can look. */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly path: string
  readonly message: string
  /** The filesystem holding the database has no room left (SQLITE_FULL, ENOSPC). */
  readonly diskFull?: boolean
}> {}
