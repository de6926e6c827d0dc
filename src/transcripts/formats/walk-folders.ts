import * as NodePath from "node:path"
import { Effect, Option } from "effect"
import { type FsError, SafeFs } from "../../fs/safe-fs.js"
import type { FormatDiscovery, FoundSession, SessionFolder } from "./transcript-format.js"

export interface WalkRules {
  /** Session files end with this (`.jsonl`). */
  readonly suffix: string
  /** Compressed session files end with this (`.jsonl.zst`): counted and listed, never read. */
  readonly compressedSuffix?: string
}

const MAX_DEPTH = 8

/**
 * Walks session folders with `lstat` only: no symbolic link is followed (a link, even the folder
 * itself, is counted and skipped) and no file is opened. A missing folder holds nothing.
 */
export const walkSessionFolders = (folders: ReadonlyArray<SessionFolder>, rules: WalkRules) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const files: Array<FoundSession> = []
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
          else if (kind === "file" && name.endsWith(rules.suffix)) files.push({ path, size, mtimeMs, archived })
          else if (kind === "file" && rules.compressedSuffix !== undefined && name.endsWith(rules.compressedSuffix)) {
            compressed.push(path)
          }
        }
      })

    for (const folder of folders) {
      const entry = yield* fs.lstat(folder.path)
      if (Option.isNone(entry)) continue
      if (entry.value.kind === "symlink") {
        skippedLinks++
        continue
      }
      if (entry.value.kind === "directory") yield* walk(folder.path, folder.archived, 0)
    }
    const found: FormatDiscovery = { files, compressed, skippedLinks }
    return found
  })
