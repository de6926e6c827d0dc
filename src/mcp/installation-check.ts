import { Data, Effect, Option } from "effect"
import type { InstallationId } from "../domain/installation-id.js"
import { ManifestStore } from "../ownership/manifest-store.js"
import type { DaemonIdentity } from "../rpc/protocol.js"
import { McpConfig } from "./mcp-config.js"

/**
 * The installation this server was registered for cannot answer: it is not installed (or was
 * uninstalled), its manifest cannot be read, or another installation is in its place. Not a
 * daemon outage: retrying does not help, the command in `remediation` does.
 */
export class InstallationUnusable extends Data.TaggedError("InstallationUnusable")<{
  readonly kind: "installation_inactive" | "installation_mismatch"
  readonly reason: string
  readonly remediation: string
}> {
  override get message() {
    return `${this.reason}. ${this.remediation}`
  }
}

const REGISTER_AGAIN =
  "Run `blctx install codex` to register this MCP server again for the current installation (or remove the stale registration)"

/**
 * The manifest under the registered state root must be active and name the registered
 * installation. Read before the daemon is asked anything, so an uninstalled blctx is reported as
 * such (with the command that installs it) instead of as a daemon that does not answer.
 */
export const checkInstallation = Effect.gen(function* () {
  const config = yield* McpConfig
  const manifests = yield* ManifestStore
  const expected = config["installation-id"]
  const manifest = yield* manifests.read().pipe(
    Effect.mapError(
      (e) =>
        new InstallationUnusable({
          kind: "installation_inactive",
          reason: `the blctx manifest ${e.path} cannot be used (${e._tag === "ManifestUnreadable" ? e.reason : `unsupported version ${String(e.version)}`})`,
          remediation: "Run `blctx doctor --step data_directory` to see why"
        })
    )
  )
  if (Option.isNone(manifest)) {
    return yield* new InstallationUnusable({
      kind: "installation_inactive",
      reason: `blctx is not installed: there is no manifest at ${manifests.path}`,
      remediation: "Run `blctx install codex`"
    })
  }
  const m = manifest.value
  if (m.installation_id !== expected) {
    return yield* new InstallationUnusable({
      kind: "installation_mismatch",
      reason: `this MCP server was registered for installation ${expected}, but ${manifests.path} names installation ${m.installation_id}`,
      remediation: REGISTER_AGAIN
    })
  }
  if (m.state !== "active") {
    return yield* new InstallationUnusable({
      kind: "installation_inactive",
      reason: `blctx installation ${expected} is inactive (it was uninstalled; its files are kept)`,
      remediation: "Run `blctx install codex` to activate it again"
    })
  }
})

/** The daemon that answered must serve the registered installation (its Ping says which). */
export const checkDaemonIdentity = (expected: InstallationId, identity: DaemonIdentity) =>
  identity.installation_id === expected
    ? Effect.void
    : Effect.fail(
        new InstallationUnusable({
          kind: "installation_mismatch",
          reason: `the daemon answering on this installation's socket (PID ${identity.pid}) serves installation ${identity.installation_id}, not ${expected}`,
          remediation:
            "Run `blctx install codex --step background_service` to restart the service for this installation"
        })
      )
