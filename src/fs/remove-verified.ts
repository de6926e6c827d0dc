import { Effect, Option } from "effect"
import { type PathSwapped, pathSwapped, swapBetween } from "./path-swapped.js"
import { type FsError, SafeFs, type StatEntry } from "./safe-fs.js"

/**
 * Removes the file blctx checked as `checked`, refusing when the path now holds something else (a
 * link, another file, a new hard link). The removal unlinks the name itself, never what a link
 * points to, so even a swap after this confirmation cannot delete another file's content.
 * A file already gone is not an error.
 */
export const removeVerified = (path: string, checked: StatEntry): Effect.Effect<void, PathSwapped | FsError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const now = yield* fs.lstat(path)
    if (Option.isNone(now)) return
    const swap = swapBetween(Option.some(checked), now)
    if (Option.isSome(swap)) return yield* pathSwapped(path, swap.value)
    yield* fs.removeFile(path)
  })
