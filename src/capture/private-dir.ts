import * as NodePath from "node:path"
import type { EntryStatus, HookFs } from "./hook-fs.js"

export type DirState = "private" | "missing" | "unsafe"

const myUid = () => process.getuid?.() ?? -1

/**
 * Whether a folder on the way to `path` is a symbolic link another user (not root) owns: its
 * owner could re-point it at will, even in sticky /tmp. A few lstat calls, one per level; the
 * daemon and the installer walk every link fully (src/fs/ownership.ts), this is the hook's
 * cheap share of it.
 */
const foreignLinkAbove = (fs: HookFs, path: string): boolean => {
  const me = myUid()
  let dir = NodePath.dirname(path)
  while (NodePath.dirname(dir) !== dir) {
    try {
      const entry = fs.lstat(dir)
      if (entry.isSymbolicLink() && entry.uid !== me && entry.uid !== 0) return true
    } catch {
      // Not there (or not to be looked at): the lstat of the folder itself decides.
    }
    dir = NodePath.dirname(dir)
  }
  return false
}

/**
 * Whether `path` is a real directory (not a link to one) of this user that no one else can
 * enter: the hook writes session bindings and event records into it, and reads the manifest
 * from one, so a link or a foreign or shared folder is refused rather than written through.
 */
export const privateDirState = (fs: HookFs, path: string): DirState => {
  let entry: EntryStatus
  try {
    entry = fs.lstat(path)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unsafe"
  }
  if (!entry.isDirectory() || entry.uid !== myUid() || (entry.mode & 0o077) !== 0) return "unsafe"
  return foreignLinkAbove(fs, path) ? "unsafe" : "private"
}

/**
 * Makes `path` (and any missing parents below an existing private one) mode 0700, then checks
 * it as privateDirState does: an existing link or shared folder is never accepted.
 */
export const ensurePrivateDir = (fs: HookFs, path: string): "private" | "unsafe" => {
  try {
    fs.mkdirPrivate(path)
  } catch {
    return "unsafe"
  }
  return privateDirState(fs, path) === "private" ? "private" : "unsafe"
}
