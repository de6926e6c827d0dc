import type { Effect } from "effect"
import type { FsError, SafeFs } from "../../fs/safe-fs.js"
import type { ResolvedPaths } from "../../paths/paths.js"
import type { TranscriptClassification, TranscriptSummary } from "../classification.js"
import type { UntypedType } from "../decode-line.js"
import type { TranscriptRecord } from "../record.js"

/** What a format is told about a file to say whether it is one of its own. */
export interface FormatProbe {
  readonly path: string
  /** The file's first bytes (up to `PROBE_BYTES`); its first line may be cut, or the file empty. */
  readonly head: Uint8Array | string
}

/**
 * A streaming classifier: fed one record at a time in file order, so a file is classified in the
 * same pass that reads it; `finish` labels every record and returns the neutral messages (the
 * selected messages of each turn, with their exact positions) and the totals.
 */
export interface TranscriptClassifier {
  readonly push: (record: TranscriptRecord) => void
  readonly finish: () => TranscriptClassification
}

/** The importer's streaming classifier: `finish` gives the messages and totals, no per-record decisions. */
export interface TranscriptSummarizer {
  readonly push: (record: TranscriptRecord) => void
  readonly finish: () => TranscriptSummary
}

/** A folder where a format keeps session files, and whether what it holds is archived. */
export interface SessionFolder {
  readonly path: string
  readonly archived: boolean
}

/** A session file found from metadata alone (the file is not opened). */
export interface FoundSession {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  readonly archived: boolean
}

/** What one format found under one home. */
export interface FormatDiscovery {
  /** Every session file, in walk order. */
  readonly files: ReadonlyArray<FoundSession>
  /** Compressed session files: reported, not read. */
  readonly compressed: ReadonlyArray<string>
  /** Symbolic links met on the way: never followed. */
  readonly skippedLinks: number
}

/** What is cheap to know about a session from its first record (`blctx explore`'s list). */
export interface SessionHeader {
  readonly session_id: string | null
  readonly cwd: string | null
}

/**
 * One agent's transcript format: how to recognise its files, where its sessions live and how to
 * classify them into neutral messages. Formats are data in a registry (`registry.ts`); storage
 * and retrieval only see `agent` and `sourceType`, so supporting another agent is one entry.
 */
export interface TranscriptFormat {
  /** Stable id of the format: `codex`. */
  readonly id: string
  /** Its name for people: `Codex`. */
  readonly label: string
  /** The agent whose transcripts these are, stored with every message (`messages.agent`). */
  readonly agent: string
  /** The `source_type` its messages are stored with (`src/history/source-type.ts`). */
  readonly sourceType: string
  /** What a file of this format looks like, for the message refusing a file no format claims. */
  readonly expects: string
  /** The agent's home from the environment (`$CODEX_HOME`, else `~/.codex`). */
  readonly home: (paths: ResolvedPaths) => string
  /** Where that home is, in words for help texts: `$CODEX_HOME, or ~/.codex`. */
  readonly homeHint: string
  /** The folders under a home that hold its sessions. */
  readonly sessionFolders: (home: string) => ReadonlyArray<SessionFolder>
  /** Whether the file is one of this format's, from its name and first bytes only. */
  readonly detect: (probe: FormatProbe) => boolean
  /** Its session files under `home`, from metadata only: no file opened, no link followed. */
  readonly discover: (home: string) => Effect.Effect<FormatDiscovery, FsError, SafeFs>
  /** A fresh streaming classifier for one file, labelling every record (`blctx explore`). */
  readonly classifier: () => TranscriptClassifier
  /**
   * A fresh lean classifier for the importer: the same messages and totals, but no decision kept
   * per record, so memory grows with what is indexed, not with the file.
   */
  readonly summarizer: () => TranscriptSummarizer
  /**
   * Records this format decides by their type alone (tool output, reasoning): the importer may
   * check such a long line in place and pass it on without decoding its payload. `type` is the
   * record's `type`, `payloadType` its payload's `type`.
   */
  readonly decidedByType?: (type: string, payloadType: string | null) => boolean
  /**
   * The type of a line written as an object without a `type` field (Gemini CLI's session header,
   * `$set` and `$rewindTo` lines), so it is read as a record of that type; without it, or when it
   * answers null, such a line is unreadable (`not_a_record`), as for Codex and Claude Code.
   */
  readonly untypedType?: UntypedType
  /** Session id and working directory from the first record, when it says them (nulls otherwise). */
  readonly header: (first: TranscriptRecord) => SessionHeader
}

/** How the shared reader reads this format's files: its types for lines written without one. */
export const readOptionsOf = (format: TranscriptFormat): { readonly untypedType?: UntypedType } =>
  format.untypedType === undefined ? {} : { untypedType: format.untypedType }
