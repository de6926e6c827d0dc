import * as NodePath from "node:path"
import { Effect } from "effect"
import { type FsError, SafeFs } from "./safe-fs.js"

/**
 * Removes a folder blctx's own programs fill without recording each file (the hooks' capture
 * spool and bindings), deepest first. Links are removed as links, never followed, so nothing
 * outside the folder is touched; an entry of another user is left, and its folder with it.
 * Returns how many entries were removed.
 */
export const removeOwnTree = (path: string): Effect.Effect<number, FsError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const entry = yield* fs.lstat(path)
    if (entry._tag === "None" || entry.value.uid !== fs.userId) return 0
    if (entry.value.kind !== "directory") {
      yield* fs.removeFile(path)
      return 1
    }
    let removed = 0
    for (const name of yield* fs.readDirectory(path)) removed += yield* removeOwnTree(NodePath.join(path, name))
    return removed + ((yield* fs.removeEmptyDirectory(path)) ? 1 : 0)
  })
