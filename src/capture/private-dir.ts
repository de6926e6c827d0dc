import * as Fs from "node:fs"

export type DirState = "private" | "missing" | "unsafe"

const myUid = () => process.getuid?.() ?? -1

/**
 * Whether `path` is a real directory (not a link to one) of this user that no one else can
 * enter: the hook writes session bindings and event records into it, and reads the manifest
 * from one, so a link or a foreign or shared folder is refused rather than written through.
 */
export const privateDirState = (path: string): DirState => {
  let entry: Fs.Stats
  try {
    entry = Fs.lstatSync(path)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unsafe"
  }
  return entry.isDirectory() && entry.uid === myUid() && (entry.mode & 0o077) === 0 ? "private" : "unsafe"
}

/**
 * Makes `path` (and any missing parents below an existing private one) mode 0700, then checks
 * it as privateDirState does: an existing link or shared folder is never accepted.
 */
export const ensurePrivateDir = (path: string): "private" | "unsafe" => {
  try {
    Fs.mkdirSync(path, { recursive: true, mode: 0o700 })
  } catch {
    return "unsafe"
  }
  return privateDirState(path) === "private" ? "private" : "unsafe"
}
