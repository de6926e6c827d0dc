import * as NodePath from "node:path"
import { Data, Effect, Option } from "effect"
import { type Entry, FsError, SafeFs } from "./safe-fs.js"

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

/** More links than this on one path is a loop (Linux's own limit is 40). */
const MAX_LINKS = 40

const components = (path: string): Array<string> => path.split("/").filter((c) => c !== "" && c !== ".")

const linkOwnedByOther = (path: string, link: string, uid: number) =>
  new OwnershipProblem({
    path,
    detail: `${link} is a symbolic link owned by user ${uid}, on the way to ${path}: its owner can point it anywhere, so blctx does not follow it`,
    remediation: `Remove the link ${link} (or replace it with one of your own), or point the variable at the real folder, then rerun.`
  })

const notYours = (path: string, uid: number, me: number) =>
  new OwnershipProblem({
    path,
    detail: `${path} belongs to user ${uid}, not to you (user ${me}); blctx never adopts another user's files`,
    remediation: `Remove or move ${path} aside if you trust it to be safe, or point the XDG variable at a folder of your own, then rerun.`
  })

const swappableDirectory = (path: string, dir: string, why: string) =>
  new OwnershipProblem({
    path,
    detail: `${dir}, above ${path}, ${why}: another user could replace blctx's files there`,
    remediation: `Use folders only you can change: fix ${dir} (chown/chmod, or chmod +t for a shared folder), or set XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME and XDG_STATE_HOME to folders under your home.`
  })

/**
 * Refuses `path` (if it exists) unless this user owns it, and refuses it when anything on the way
 * to it lets another user change what lies below: a directory another user could swap entries
 * of, or a symbolic link another user owns (its owner can re-point it at will, even in sticky
 * /tmp). The path is resolved one component at a time, as the kernel does, so every link met,
 * inside another link's target too, and every directory passed through is judged, not only the
 * canonical folder at the end. Existence, kind and mode are the caller's business; this is only
 * about who could have written it.
 */
export const checkOwnership = (path: string): Effect.Effect<void, OwnershipProblem | FsError, SafeFs> =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const me = fs.userId
    const passThrough = (dir: string) =>
      Effect.flatMap(fs.lstat(dir), (entry) =>
        Option.match(
          Option.flatMap(entry, (e) => swappableBy(e, me)),
          {
            onNone: () => Effect.void,
            onSome: (why) => Effect.fail(swappableDirectory(path, dir, why))
          }
        )
      )
    let dir = "/"
    yield* passThrough(dir)
    let pending = components(NodePath.resolve(path))
    let links = 0
    while (pending.length > 0) {
      const [name, ...rest] = pending
      pending = rest
      if (name === "..") {
        dir = NodePath.dirname(dir)
        continue
      }
      const next = NodePath.join(dir, name as string)
      const entry = yield* fs.lstat(next)
      // The rest does not exist yet: whoever creates it creates it in `dir`, which passed.
      if (Option.isNone(entry)) return
      if (entry.value.kind === "symlink") {
        if (entry.value.uid !== me && entry.value.uid !== ROOT_UID) {
          return yield* linkOwnedByOther(path, next, entry.value.uid)
        }
        if (++links > MAX_LINKS) {
          return yield* new FsError({
            op: "resolve",
            path,
            code: "ELOOP",
            message: `too many links on the way to ${path}`
          })
        }
        const target = yield* fs.readLink(next)
        if (NodePath.isAbsolute(target)) {
          dir = "/"
        }
        pending = [...components(target), ...pending]
        continue
      }
      if (pending.length === 0) {
        if (entry.value.uid !== me) return yield* notYours(path, entry.value.uid, me)
        return
      }
      yield* passThrough(next)
      dir = next
    }
  })
