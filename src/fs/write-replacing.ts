import { Effect, Option } from "effect"
import { type PathSwapped, pathSwapped, swapBetween } from "./path-swapped.js"
import { type FsError, SafeFs, type StatEntry } from "./safe-fs.js"

/**
 * Writes `path` atomically (a new temp file in the same folder, created exclusively, then renamed
 * over it) after confirming the path still holds what blctx checked (`checked`, none when it was
 * absent). The rename replaces whatever name is there and never follows it, so even a swap after
 * this confirmation cannot make the write land in another file.
 */
export const writeReplacing = (
  path: string,
  content: string | Uint8Array,
  mode: number,
  checked: Option.Option<StatEntry>
): Effect.Effect<void, PathSwapped | FsError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const swap = swapBetween(checked, yield* fs.lstat(path))
    if (Option.isSome(swap)) return yield* pathSwapped(path, swap.value)
    yield* fs.writeAtomic(path, content, mode)
  })
