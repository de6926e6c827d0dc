import { Effect, Option } from "effect"
import { type PathSwapped, pathSwapped, swapBetween } from "./path-swapped.js"
import { type FsError, SafeFs, type StatEntry } from "./safe-fs.js"

// Keeps a byte order mark as text, as reading by path did (Buffer's utf8 decoding keeps it).
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true })

/**
 * Reads the file blctx checked as `checked`, through a descriptor opened without following links
 * and compared with the check (device, inode, kind, owner, no new hard link), so what is read is
 * the very file that was checked, never one swapped in at its path since.
 */
export const readVerified = (path: string, checked: StatEntry): Effect.Effect<string, PathSwapped | FsError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const bytes = yield* fs
      .readOpened(path, (opened) =>
        Option.match(swapBetween(Option.some(checked), Option.some(opened)), {
          onNone: (): Effect.Effect<void, PathSwapped> => Effect.void,
          onSome: (swap) => Effect.fail(pathSwapped(path, swap))
        })
      )
      .pipe(
        Effect.mapError((e): PathSwapped | FsError => {
          if (e._tag !== "FsError") return e
          // O_NOFOLLOW refuses a link with ELOOP (EMLINK on some BSDs).
          if (e.code === "ELOOP" || e.code === "EMLINK") return pathSwapped(path, "symbolic_link")
          if (e.code === "ENOENT") return pathSwapped(path, "removed")
          return e
        })
      )
    return utf8.decode(bytes)
  })
