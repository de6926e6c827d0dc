import * as NodePath from "node:path"
import { Schema } from "effect"

/** One agent's home in a snapshot: where its format looked and what it found. */
export const SnapshotHome = Schema.Struct({
  /** The transcript format's id (`codex`) and its agent. */
  format: Schema.String,
  agent: Schema.String,
  label: Schema.String,
  home: Schema.String,
  folders: Schema.Array(Schema.String),
  total: Schema.Number,
  active: Schema.Number,
  archived: Schema.Number
})
export type SnapshotHome = typeof SnapshotHome.Type

/**
 * What `session_discovery` leaves in the state directory for `history_index`: counts and the
 * newest session paths, from file metadata only. `homes` (one per registered transcript format)
 * and `newest[].format` were added without a new version: a snapshot written before them still
 * reads, and is described from `codex_home`.
 */
export const DiscoverySnapshot = Schema.Struct({
  version: Schema.Literal(1),
  discovered_at: Schema.String,
  /** The Codex home looked in (every snapshot has it; `homes` says the same for every format). */
  codex_home: Schema.String,
  homes: Schema.optional(Schema.Array(SnapshotHome)),
  total: Schema.Number,
  active: Schema.Number,
  archived: Schema.Number,
  compressed: Schema.Struct({ count: Schema.Number, paths: Schema.Array(Schema.String) }),
  skipped_links: Schema.Number,
  /** The most recently modified session files, newest first. */
  newest: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      size: Schema.Number,
      modified_at: Schema.String,
      archived: Schema.Boolean,
      format: Schema.optional(Schema.String)
    })
  )
})
export type DiscoverySnapshot = typeof DiscoverySnapshot.Type

export const DISCOVERY_SNAPSHOT_FILE = "session-discovery.json"
export const NEWEST_COUNT = 5

export const discoverySnapshotPath = (stateDir: string) => NodePath.join(stateDir, DISCOVERY_SNAPSHOT_FILE)

export const decodeDiscoverySnapshot = Schema.decodeUnknownEither(Schema.parseJson(DiscoverySnapshot))
