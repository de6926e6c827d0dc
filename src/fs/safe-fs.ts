import { Context, Data, type Effect, type Option } from "effect"

export type EntryKind = "file" | "directory" | "symlink" | "socket" | "other"

/** What `lstat` says about a path, without following a symbolic link. */
export interface Entry {
  readonly kind: EntryKind
  /** Permission bits only (mode & 0o7777). */
  readonly mode: number
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
  /** How many names the file has: more than one means a hard link shares its content. */
  readonly nlink: number
  /** The owner's user id. */
  readonly uid: number
}

/**
 * What `lstat` (or `fstat` of an open descriptor) says, with the device: device and inode
 * together name one file whatever its path, so a check and a later use can be compared.
 */
export interface StatEntry extends Entry {
  readonly dev: number
}

/** A filesystem operation failed; carries the path and errno code for the person reading it. */
export class FsError extends Data.TaggedError("FsError")<{
  readonly op: string
  readonly path: string
  readonly code: string
  readonly message: string
}> {}

/** `writable`, or why not: the filesystem is mounted read-only (EROFS), or access is refused. */
export type Writability = "writable" | "read_only_filesystem" | "denied"

/**
 * The filesystem operations blctx's owned files need: never following symbolic links when
 * checking ownership, private modes on creation, and crash-safe (atomic) replacement.
 */
export class SafeFs extends Context.Tag("blctx/SafeFs")<
  SafeFs,
  {
    readonly lstat: (path: string) => Effect.Effect<Option.Option<StatEntry>, FsError>
    /** Creates one directory level with the given mode (the umask does not widen it). */
    readonly makeDirectory: (path: string, mode: number) => Effect.Effect<void, FsError>
    /** Whether this user may write in `path`; a read-only filesystem is told apart from a refusal. */
    readonly writability: (path: string) => Effect.Effect<Writability>
    readonly readText: (path: string) => Effect.Effect<string, FsError>
    /**
     * Opens `path` without following a symbolic link in its last component (O_NOFOLLOW, and
     * O_NONBLOCK so a FIFO cannot stall), hands the descriptor's own `fstat` to `admit`, and reads
     * through that same descriptor only if `admit` succeeds. A link at the path fails with ELOOP.
     */
    readonly readOpened: <E>(
      path: string,
      admit: (opened: StatEntry) => Effect.Effect<void, E>
    ) => Effect.Effect<Uint8Array, FsError | E>
    readonly readDirectory: (path: string) => Effect.Effect<ReadonlyArray<string>, FsError>
    /** Temp file in the same directory, fsync, rename over `path`, fsync the directory. */
    readonly writeAtomic: (path: string, content: string | Uint8Array, mode: number) => Effect.Effect<void, FsError>
    /** rename + fsync of the target directory. */
    readonly renameDurable: (from: string, to: string) => Effect.Effect<void, FsError>
    readonly fsyncFile: (path: string) => Effect.Effect<void, FsError>
    /** Removes a file; a missing file is not an error. */
    readonly removeFile: (path: string) => Effect.Effect<void, FsError>
    /** Removes a directory only if it is empty; returns whether it was removed. */
    readonly removeEmptyDirectory: (path: string) => Effect.Effect<boolean, FsError>
    readonly exists: (path: string) => Effect.Effect<boolean>
    /** What a symbolic link holds, as written (relative or absolute), never followed. */
    readonly readLink: (path: string) => Effect.Effect<string, FsError>
    /** The canonical absolute path, every link resolved (the path must exist). */
    readonly realPath: (path: string) => Effect.Effect<string, FsError>
    /** The user id this process runs as: the only owner blctx accepts for its files. */
    readonly userId: number
  }
>() {}
