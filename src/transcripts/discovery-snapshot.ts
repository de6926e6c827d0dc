import * as NodePath from "node:path"
import { Schema } from "effect"

/**
 * What `session_discovery` leaves in the state directory for `history_index`: counts and the
 * newest session paths, from file metadata only.
 */
export const DiscoverySnapshot = Schema.Struct({
  version: Schema.Literal(1),
  discovered_at: Schema.String,
  codex_home: Schema.String,
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
      archived: Schema.Boolean
    })
  )
})
export type DiscoverySnapshot = typeof DiscoverySnapshot.Type

export const DISCOVERY_SNAPSHOT_FILE = "session-discovery.json"
export const NEWEST_COUNT = 5

export const discoverySnapshotPath = (stateDir: string) => NodePath.join(stateDir, DISCOVERY_SNAPSHOT_FILE)

export const decodeDiscoverySnapshot = Schema.decodeUnknownEither(Schema.parseJson(DiscoverySnapshot))
