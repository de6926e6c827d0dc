import { Data, Effect, Option } from "effect"
import { SafeFs } from "../fs/safe-fs.js"
import type { TranscriptFileError } from "../transcripts/transcript-files.js"

/** How a file changed between being opened and the end of its read. */
export type ChangeWhileRead = "removed" | "replaced" | "truncated" | "rewritten"

/**
 * The bytes an import read are not one version of the file: it was removed, replaced, truncated
 * or rewritten while it was read. Nothing of it is stored; the next import reads it again.
 */
export class FileChangedWhileRead extends Data.TaggedError("FileChangedWhileRead")<{
  readonly path: string
  readonly change: ChangeWhileRead
  readonly message: string
}> {}

const REMEDY = "nothing of it was imported; the next import reads it again"

const changed = (path: string, change: ChangeWhileRead, what: string) =>
  new FileChangedWhileRead({ path, change, message: `${what} while it was read: ${REMEDY}` })

/** What the file was when it was opened: the bytes `[0, size)` were read, their SHA-256 is `digest`. */
export interface OpenedFile {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
  readonly digest: string
}

/**
 * Proves that what was read is one version of the file, looking at its path again once the
 * read is done. Unchanged size and mtime, same inode: it is. A different inode or none: the
 * path now names another file (or none), so what was read is not what is there. Shorter: it was
 * truncated. Otherwise it grew or was touched, which an append and a rewrite in place both look
 * like, so `rehash` reads `[0, size)` again: the same digest means the bytes read are still the
 * file's prefix (what grew is read by the next import), another means they were rewritten.
 *
 * A change within one tick of the filesystem's clock, keeping size and inode, cannot be seen
 * here, as it cannot by the importer's unchanged-file check.
 */
export const verifyReadSnapshot = (
  opened: OpenedFile,
  rehash: Effect.Effect<string, TranscriptFileError>
): Effect.Effect<void, FileChangedWhileRead | TranscriptFileError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    // A path that cannot be looked at now falls through to the content check below.
    const now = yield* fs.lstat(opened.path).pipe(Effect.option)
    if (Option.isSome(now)) {
      const entry = now.value
      if (Option.isNone(entry)) return yield* changed(opened.path, "removed", "removed or moved")
      const { kind, ino, size, mtimeMs } = entry.value
      if (kind !== "file" || ino !== opened.ino) {
        return yield* changed(opened.path, "replaced", "replaced by another file")
      }
      if (size < opened.size) {
        return yield* changed(opened.path, "truncated", `truncated to ${size} bytes (of ${opened.size})`)
      }
      if (size === opened.size && mtimeMs === opened.mtimeMs) return
    }
    if ((yield* rehash) !== opened.digest) return yield* changed(opened.path, "rewritten", "rewritten")
  })
