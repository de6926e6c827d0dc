import { DateTime, Effect } from "effect"
import type { ResolvedPaths } from "../paths/paths.js"
import { TRANSCRIPT_FORMATS } from "./formats/registry.js"
import type { FoundSession, TranscriptFormat } from "./formats/transcript-format.js"

/** A session file found on disk, from metadata only (the file is not opened), with its format. */
export interface SessionFile extends FoundSession {
  /** The id of the format whose folders it was found in (`codex`). */
  readonly format: string
}

/** Where to look: a format and the home its session folders are under. */
export interface DiscoveryTarget {
  readonly format: TranscriptFormat
  readonly home: string
}

/** What was found under one target. */
export interface HomeDiscovery {
  readonly format: string
  readonly agent: string
  readonly label: string
  readonly home: string
  /** The folders looked in, e.g. `$CODEX_HOME/sessions` and `$CODEX_HOME/archived_sessions`. */
  readonly folders: ReadonlyArray<string>
  readonly total: number
  readonly active: number
  readonly archived: number
}

export interface SessionDiscovery {
  readonly homes: ReadonlyArray<HomeDiscovery>
  /** Every session file, newest modification first (a path found twice is listed once). */
  readonly files: ReadonlyArray<SessionFile>
  readonly activeCount: number
  readonly archivedCount: number
  /** Compressed session files (`.jsonl.zst`, written by newer Codex builds): reported, not read. */
  readonly compressed: ReadonlyArray<string>
  /** Symbolic links met on the way: never followed. */
  readonly skippedLinks: number
}

/** What a discovery found, in the figures the session snapshot and `explore --list` both report. */
export const discoveryTotals = (found: SessionDiscovery) => ({
  homes: found.homes,
  total: found.files.length,
  active: found.activeCount,
  archived: found.archivedCount,
  compressed: { count: found.compressed.length, paths: found.compressed },
  skipped_links: found.skippedLinks
})

/** A found file as the session snapshot and `explore --list` show it. */
export const shownFile = (file: SessionFile) => ({
  path: file.path,
  size: file.size,
  modified_at: DateTime.formatIso(DateTime.unsafeMake(file.mtimeMs)),
  archived: file.archived,
  format: file.format
})

const newestFirst = (a: SessionFile, b: SessionFile) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? 1 : -1)

/** Every registered format, each at its agent's home from the environment (`$CODEX_HOME` or `~/.codex`). */
export const defaultTargets = (
  paths: ResolvedPaths,
  formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS
): ReadonlyArray<DiscoveryTarget> => formats.map((format) => ({ format, home: format.home(paths) }))

/** One folder a person named (`--root`) as an agent's home: every format looks for its own folders there. */
export const targetsUnder = (
  root: string,
  formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS
): ReadonlyArray<DiscoveryTarget> => formats.map((format) => ({ format, home: root }))

/** The folders the targets look in, for messages: `/h/.codex/sessions and /h/.codex/archived_sessions`. */
export const describeTargets = (targets: ReadonlyArray<DiscoveryTarget>): string => {
  const folders = targets.flatMap((t) => t.format.sessionFolders(t.home).map((f) => f.path))
  return folders.length <= 1 ? (folders[0] ?? "") : `${folders.slice(0, -1).join(", ")} and ${folders.at(-1)}`
}

/**
 * Finds every target's session files with `lstat` only: no symbolic link is followed and no file
 * is opened. Each format walks its own folders (`TranscriptFormat.discover`).
 */
export const discoverTranscripts = Effect.fn("Transcripts.discover")(function* (
  targets: ReadonlyArray<DiscoveryTarget>
) {
  const homes: Array<HomeDiscovery> = []
  const files: Array<SessionFile> = []
  const seen = new Set<string>()
  const compressed: Array<string> = []
  let skippedLinks = 0
  for (const { format, home } of targets) {
    const found = yield* format.discover(home)
    const own = found.files.filter((f) => !seen.has(f.path))
    for (const f of own) {
      seen.add(f.path)
      files.push({ ...f, format: format.id })
    }
    compressed.push(...found.compressed.filter((p) => !compressed.includes(p)))
    skippedLinks += found.skippedLinks
    homes.push({
      format: format.id,
      agent: format.agent,
      label: format.label,
      home,
      folders: format.sessionFolders(home).map((f) => f.path),
      total: own.length,
      active: own.filter((f) => !f.archived).length,
      archived: own.filter((f) => f.archived).length
    })
  }
  files.sort(newestFirst)
  const discovery: SessionDiscovery = {
    homes,
    files,
    activeCount: files.filter((f) => !f.archived).length,
    archivedCount: files.filter((f) => f.archived).length,
    compressed,
    skippedLinks
  }
  return discovery
})
