import * as NodePath from "node:path"
import { Effect, Option } from "effect"
import { type FsError, SafeFs } from "../fs/safe-fs.js"

/** A session file found on disk, from metadata only (the file is not opened). */
export interface SessionFile {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  readonly archived: boolean
}

export interface SessionDiscovery {
  readonly codexHome: string
  /** Every regular `.jsonl` file, newest modification first. */
  readonly files: ReadonlyArray<SessionFile>
  readonly activeCount: number
  readonly archivedCount: number
  /** `.jsonl.zst` files (compressed by newer Codex builds): reported, not read. */
  readonly compressed: ReadonlyArray<string>
  /** Symbolic links met on the way: never followed. */
  readonly skippedLinks: number
}

export const SESSIONS_DIR = "sessions"
export const ARCHIVED_DIR = "archived_sessions"
const MAX_DEPTH = 8

const newestFirst = (a: SessionFile, b: SessionFile) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? 1 : -1)

/**
 * Finds Codex session files under `$CODEX_HOME/sessions` and `$CODEX_HOME/archived_sessions`
 * with `lstat` only: no symbolic link is followed and no file is opened.
 */
export const discoverSessions = Effect.fn("Transcripts.discoverSessions")(function* (codexHome: string) {
  const fs = yield* SafeFs
  const files: Array<SessionFile> = []
  const compressed: Array<string> = []
  let skippedLinks = 0

  const walk = (dir: string, archived: boolean, depth: number): Effect.Effect<void, FsError> =>
    Effect.gen(function* () {
      const names = [...(yield* fs.readDirectory(dir))].sort()
      for (const name of names) {
        const path = NodePath.join(dir, name)
        const entry = yield* fs.lstat(path)
        if (Option.isNone(entry)) continue
        const { kind, size, mtimeMs } = entry.value
        if (kind === "symlink") skippedLinks++
        else if (kind === "directory" && depth < MAX_DEPTH) yield* walk(path, archived, depth + 1)
        else if (kind === "file" && name.endsWith(".jsonl")) files.push({ path, size, mtimeMs, archived })
        else if (kind === "file" && name.endsWith(".jsonl.zst")) compressed.push(path)
      }
    })

  for (const [sub, archived] of [
    [SESSIONS_DIR, false],
    [ARCHIVED_DIR, true]
  ] as const) {
    const root = NodePath.join(codexHome, sub)
    const entry = yield* fs.lstat(root)
    if (Option.isNone(entry)) continue
    if (entry.value.kind === "symlink") {
      skippedLinks++
      continue
    }
    if (entry.value.kind === "directory") yield* walk(root, archived, 0)
  }

  files.sort(newestFirst)
  const discovery: SessionDiscovery = {
    codexHome,
    files,
    activeCount: files.filter((f) => !f.archived).length,
    archivedCount: files.filter((f) => f.archived).length,
    compressed,
    skippedLinks
  }
  return discovery
})
