import { Context, Data, type Effect, type Scope } from "effect"

/** Reading a transcript file failed: says which file and what a person can do about it. */
export class TranscriptFileError extends Data.TaggedError("TranscriptFileError")<{
  readonly op: string
  readonly path: string
  readonly code: string
  readonly message: string
  readonly remediation: string
}> {}

/**
 * An open transcript. `size` is captured once, when the file is opened: a file that is still
 * being written is read only up to that size, so every reader of one open sees the same bytes.
 */
export interface TranscriptHandle {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  /** Device and inode: tell a file replaced under the same path from one that grew. */
  readonly dev: number
  readonly ino: number
  /** Reads up to `length` bytes at `position`; fewer (or none) at the end of the file. */
  readonly read: (position: number, length: number) => Effect.Effect<Uint8Array, TranscriptFileError>
  /** Reads into `buffer` (reused by the caller, so long reads allocate nothing); returns the bytes read. */
  readonly readInto: (position: number, buffer: Uint8Array) => Effect.Effect<number, TranscriptFileError>
}

/** The one port the transcript reader needs: open a regular file for positioned reads. */
export class TranscriptFiles extends Context.Tag("blctx/TranscriptFiles")<
  TranscriptFiles,
  {
    /**
     * Opens `path` read-only; closed when the scope closes. Refuses anything but a regular file,
     * judged on the opened descriptor, without ever blocking or following a final symbolic link:
     * a FIFO, socket, device, directory or link fails at once with a reason naming what it is.
     */
    readonly open: (path: string) => Effect.Effect<TranscriptHandle, TranscriptFileError, Scope.Scope>
  }
>() {}
