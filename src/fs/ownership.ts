import * as NodePath from "node:path"
import { Data, Effect, Option } from "effect"
import { type Entry, type FsError, SafeFs } from "./safe-fs.js"

/** A path blctx would trust is owned, or could be swapped, by another user. Says what to do. */
export class OwnershipProblem extends Data.TaggedError("OwnershipProblem")<{
  readonly path: string
  readonly detail: string
  readonly remediation: string
}> {}

const ROOT_UID = 0
const WORLD_WRITABLE = 0o002
const STICKY = 0o1000

/**
 * Why another user could replace entries of this directory, if they could: it is owned by
 * someone other than this user or root, or anyone may write to it without the sticky bit
 * (which keeps people from renaming or deleting each other's entries, as in /tmp).
 */
const swappableBy = (entry: Entry, me: number): Option.Option<string> => {
  if (entry.uid !== me && entry.uid !== ROOT_UID) return Option.some(`is owned by user ${entry.uid}`)
  if ((entry.mode & WORLD_WRITABLE) !== 0 && (entry.mode & STICKY) === 0) {
    return Option.some(
      `is writable by every user and lacks the sticky bit (mode ${entry.mode.toString(8).padStart(4, "0")})`
    )
  }
  return Option.none()
}

/**
 * Refuses `path` (if it exists) unless this user owns it, and refuses it when any directory
 * above it, links resolved, lets another user swap what lies below. Existence, kind and mode
 * are the caller's business; this is only about who could have written it.
 */
export const checkOwnership = (path: string): Effect.Effect<void, OwnershipProblem | FsError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const me = fs.userId
    const own = yield* fs.lstat(path)
    if (Option.isSome(own) && own.value.uid !== me) {
      return yield* new OwnershipProblem({
        path,
        detail: `${path} belongs to user ${own.value.uid}, not to you (user ${me}); blctx never adopts another user's files`,
        remediation: `Remove or move ${path} aside if you trust it to be safe, or point the XDG variable at a folder of your own, then rerun.`
      })
    }
    // The nearest existing ancestor, canonical: every directory from it up to / is checked.
    let cursor = NodePath.dirname(path)
    while (Option.isNone(yield* fs.lstat(cursor)) && NodePath.dirname(cursor) !== cursor) {
      cursor = NodePath.dirname(cursor)
    }
    let dir = yield* fs.realPath(cursor)
    while (true) {
      const entry = yield* fs.lstat(dir)
      if (Option.isSome(entry)) {
        const why = swappableBy(entry.value, me)
        if (Option.isSome(why)) {
          return yield* new OwnershipProblem({
            path,
            detail: `${dir}, above ${path}, ${why.value}: another user could replace blctx's files there`,
            remediation: `Use folders only you can change: fix ${dir} (chown/chmod, or chmod +t for a shared folder), or set XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME and XDG_STATE_HOME to folders under your home.`
          })
        }
      }
      const parent = NodePath.dirname(dir)
      if (parent === dir) return
      dir = parent
    }
  })
