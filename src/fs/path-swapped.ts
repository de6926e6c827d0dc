import { Data, Option } from "effect"
import type { StatEntry } from "./safe-fs.js"

/** How a checked path changed before blctx used it. */
export type SwapKind = "symbolic_link" | "hard_link" | "replaced" | "removed" | "appeared"

/**
 * A path blctx checked changed before it was read, written or removed: someone swapped it (for a
 * link, or another file) in between. blctx refuses rather than act on what it did not check.
 */
export class PathSwapped extends Data.TaggedError("PathSwapped")<{
  readonly path: string
  readonly swap: SwapKind
  readonly message: string
}> {}

const described: Record<SwapKind, string> = {
  symbolic_link: "was replaced by a symbolic link",
  hard_link: "gained a second hard link",
  replaced: "was replaced by another file",
  removed: "was removed",
  appeared: "appeared"
}

/** "was replaced by a symbolic link between check and use": for messages that name the path already. */
export const swapDescription = (swap: SwapKind) => `${described[swap]} between check and use`

export const pathSwapped = (path: string, swap: SwapKind) =>
  new PathSwapped({ path, swap, message: `${path} ${swapDescription(swap)}; left untouched` })

/**
 * What changed between the entry blctx checked and the one there now (both as `lstat`/`fstat` say,
 * none for absent). The same file means the same device, inode, kind and owner, and no more names
 * than it had: a new hard link lets a write or a read reach (or be reached from) another path.
 */
export const swapBetween = (
  checked: Option.Option<StatEntry>,
  now: Option.Option<StatEntry>
): Option.Option<SwapKind> => {
  if (Option.isNone(checked)) {
    if (Option.isNone(now)) return Option.none()
    return Option.some(now.value.kind === "symlink" ? "symbolic_link" : "appeared")
  }
  if (Option.isNone(now)) return Option.some("removed")
  const before = checked.value
  const after = now.value
  if (after.kind === "symlink" && before.kind !== "symlink") return Option.some("symbolic_link")
  if (after.dev !== before.dev || after.ino !== before.ino || after.kind !== before.kind || after.uid !== before.uid) {
    return Option.some("replaced")
  }
  if (after.nlink > before.nlink) return Option.some("hard_link")
  return Option.none()
}
