/**
 * The file system as the hook handler uses it: a small object of plain functions (the hook cannot
 * load `effect`, so this port is not a Context tag). The handler's logic takes it as a parameter;
 * programs/hook.ts passes the node:fs one (layers/node-hook-fs.ts), tests may pass another.
 * Each function behaves as the node:fs call it is named after: it throws Node's errors (with their
 * `code`, e.g. ENOENT or EEXIST), which the logic reads.
 */

/** What the hook reads of an entry's status (a subset of node:fs `Stats`). */
export interface EntryStatus {
  readonly uid: number
  readonly mode: number
  readonly size: number
  readonly isFile: () => boolean
  readonly isDirectory: () => boolean
  readonly isSymbolicLink: () => boolean
}

/** One read of up to `buffer.length` bytes; `bytesRead` 0 is the end of the input. */
export type ReadChunk = (buffer: Buffer, done: (error: NodeJS.ErrnoException | null, bytesRead: number) => void) => void

export interface HookFs {
  /** The entry itself, never a link's target (lstat). */
  readonly lstat: (path: string) => EntryStatus
  /** Makes `path` and any missing parents, mode 0700 (mkdir -p). */
  readonly mkdirPrivate: (path: string) => void
  /** Opens `path` for reading, refusing to follow a link at its last component (O_NOFOLLOW). */
  readonly openNoFollow: (path: string) => number
  readonly fstat: (fd: number) => EntryStatus
  /** The whole of an open file, as UTF-8. */
  readonly readText: (fd: number) => string
  readonly close: (fd: number) => void
  /** Creates `path` exclusively (fails with EEXIST), mode 0600, holding `text`. */
  readonly writeNew: (path: string, text: string) => void
  /** Hard-links `existing` as `path`, which must not exist (fails with EEXIST). */
  readonly link: (existing: string, path: string) => void
  readonly rename: (from: string, to: string) => void
  /** Removes a file; one already gone is no error. */
  readonly remove: (path: string) => void
  /** The hook's standard input, read without Node's streams. */
  readonly stdin: ReadChunk
}
