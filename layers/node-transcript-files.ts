import * as Fs from "node:fs"
import * as FsPromises from "node:fs/promises"
import { Effect, Layer } from "effect"
import { TranscriptFileError, TranscriptFiles, type TranscriptHandle } from "../src/transcripts/transcript-files.js"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EUNKNOWN"

const remediationFor = (code: string, path: string): string => {
  switch (code) {
    case "ENOENT":
      return `Check the path: ${path} does not exist (list transcripts with: blctx explore).`
    case "EACCES":
    case "EPERM":
      return `You cannot read ${path}; check its owner and permissions.`
    case "ELOOP":
      return `${path} is a symbolic link, which blctx never follows; give the regular file it points to.`
    case "EISDIR":
    case "ENOTREG":
      return `${path} is not a regular file; pass a rollout-*.jsonl file.`
    default:
      return `Check that ${path} is a readable file.`
  }
}

const failure = (op: string, path: string, error: unknown) => {
  const code = codeOf(error)
  return new TranscriptFileError({
    op,
    path,
    code,
    message: error instanceof Error ? error.message : String(error),
    remediation: remediationFor(code, path)
  })
}

/** What a file that is not a regular file is, for the person who named it. */
const kindOf = (stats: Fs.Stats): string => {
  if (stats.isDirectory()) return "a directory"
  if (stats.isFIFO()) return "a FIFO (named pipe)"
  if (stats.isSocket()) return "a socket"
  if (stats.isCharacterDevice()) return "a character device"
  if (stats.isBlockDevice()) return "a block device"
  if (stats.isSymbolicLink()) return "a symbolic link"
  return "not a regular file"
}

const notRegular = (path: string, stats: Fs.Stats) => {
  const code = stats.isDirectory() ? "EISDIR" : stats.isSymbolicLink() ? "ELOOP" : "ENOTREG"
  const kind = kindOf(stats)
  return new TranscriptFileError({
    op: "open",
    path,
    code,
    message: kind.startsWith("a ") ? `is ${kind}, not a regular file` : "is not a regular file",
    remediation: remediationFor(code, path)
  })
}

/**
 * Read-only, never following a final symbolic link (O_NOFOLLOW), and non-blocking (O_NONBLOCK):
 * opening a FIFO returns at once instead of waiting for a writer. O_NONBLOCK changes nothing for
 * regular files, the only kind that is ever read.
 */
const OPEN_FLAGS = Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW | Fs.constants.O_NONBLOCK

/** Why `open` refused `path`, in words: ELOOP is the link O_NOFOLLOW refused, ENXIO a socket or a device. */
const openFailure = (path: string, error: unknown) =>
  Effect.gen(function* () {
    const code = codeOf(error)
    if (code !== "ELOOP" && code !== "ENXIO") return failure("open", path, error)
    // The kind of the entry itself (lstat never follows and never opens), to name it.
    const stats = yield* Effect.option(Effect.tryPromise(() => FsPromises.lstat(path)))
    if (stats._tag === "Some" && !stats.value.isFile()) return notRegular(path, stats.value)
    return failure("open", path, error)
  })

/**
 * node:fs positioned reads of regular files only: the kind is checked with fstat on the opened
 * descriptor, so what is read is what was checked. The handle closes with the scope.
 */
export const NodeTranscriptFilesLive = Layer.succeed(TranscriptFiles, {
  open: (path) =>
    Effect.gen(function* () {
      const handle = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => FsPromises.open(path, OPEN_FLAGS), catch: (e) => e }).pipe(
          Effect.catchAll((e) => Effect.flip(openFailure(path, e)))
        ),
        // Not awaited: closing waits for reads still in flight, and a stopped import must not wait.
        (h) => Effect.sync(() => void h.close().catch(() => undefined))
      )
      const stats = yield* Effect.tryPromise({ try: () => handle.stat(), catch: (e) => failure("stat", path, e) })
      if (!stats.isFile()) return yield* Effect.fail(notRegular(path, stats))
      const result: TranscriptHandle = {
        path,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        dev: stats.dev,
        ino: stats.ino,
        read: (position, length) =>
          Effect.tryPromise({
            try: async () => {
              const buffer = Buffer.allocUnsafe(length)
              const { bytesRead } = await handle.read(buffer, 0, length, position)
              return bytesRead === length ? buffer : buffer.subarray(0, bytesRead)
            },
            catch: (e) => failure("read", path, e)
          }),
        readInto: (position, buffer) =>
          Effect.tryPromise({
            try: async () => (await handle.read(buffer, 0, buffer.length, position)).bytesRead,
            catch: (e) => failure("read", path, e)
          })
      }
      return result
    })
})
