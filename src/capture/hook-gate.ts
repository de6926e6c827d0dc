import * as NodePath from "node:path"
import { homeField, recordsKey } from "../ownership/manifest-keys.js"
import { CAPTURE_AGENTS, type CaptureAgent } from "./capture-record.js"
import type { HookFs } from "./hook-fs.js"
import { privateDirState } from "./private-dir.js"

/** `<state-home>/blctx` and its manifest, as src/paths/paths.ts names them (it imports effect). */
export const APP_DIR = "blctx"
export const MANIFEST_FILE = "installation.json"
/** A real manifest is a few kilobytes; a larger one is not read. */
export const MAX_MANIFEST_BYTES = 1_048_576

export type GateResult =
  | { readonly open: true; readonly agent: CaptureAgent; readonly agentHome: string }
  | {
      readonly open: false
      readonly reason:
        | "not_installed"
        | "inactive"
        | "other_installation"
        | "stale_generation"
        | "manifest_unreadable"
        | "unsafe_directory"
    }

/** The manifest's text: a regular file of this user (never through a link), at most MAX_MANIFEST_BYTES. */
export const readManifestText = (fs: HookFs, path: string): string | "missing" | "unreadable" => {
  let fd: number
  try {
    fd = fs.openNoFollow(path)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable"
  }
  try {
    const stat = fs.fstat(fd)
    if (!stat.isFile() || stat.uid !== (process.getuid?.() ?? -1) || stat.size > MAX_MANIFEST_BYTES) return "unreadable"
    return fs.readText(fd)
  } catch {
    return "unreadable"
  } finally {
    fs.close(fd)
  }
}

/** Where the manifest records each agent's hooks, and the field naming that agent's home. */
const REGISTRATIONS: ReadonlyArray<{
  readonly agent: CaptureAgent
  readonly records: string
  readonly homeKey: string
}> = CAPTURE_AGENTS.map((agent) => ({ agent, records: recordsKey(agent, "hooks"), homeKey: homeField(agent) }))

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Whether this handler may capture: the installation's manifest exists, is active, is the
 * installation argv names, and still registers hooks of argv's generation. An uninstalled or
 * reinstalled blctx thus stops an old handler (even one already running) from enqueueing; the
 * daemon checks the generation again when it drains. The registration holding the generation
 * (`codex_hooks` or `claude_hooks`) says which agent ran the hook, and its home (`codex_home` or
 * `claude_home`) is the agent home the captured session id belongs to. Plain JSON: a schema
 * library would cost start-up time, and only a few fields are read.
 */
export const openGate = (fs: HookFs, stateHome: string, installationId: string, generation: string): GateResult => {
  const stateDir = NodePath.join(stateHome, APP_DIR)
  const dir = privateDirState(fs, stateDir)
  if (dir === "missing") return { open: false, reason: "not_installed" }
  if (dir === "unsafe") return { open: false, reason: "unsafe_directory" }
  const text = readManifestText(fs, NodePath.join(stateDir, MANIFEST_FILE))
  if (text === "missing") return { open: false, reason: "not_installed" }
  if (text === "unreadable") return { open: false, reason: "manifest_unreadable" }
  let manifest: unknown
  try {
    manifest = JSON.parse(text)
  } catch {
    return { open: false, reason: "manifest_unreadable" }
  }
  if (!isRecord(manifest)) return { open: false, reason: "manifest_unreadable" }
  if (manifest.state !== "active") return { open: false, reason: "inactive" }
  if (
    typeof manifest.installation_id !== "string" ||
    manifest.installation_id.toLowerCase() !== installationId.toLowerCase()
  ) {
    return { open: false, reason: "other_installation" }
  }
  const sameGeneration = (h: unknown): h is Record<string, unknown> =>
    isRecord(h) && typeof h.generation === "string" && h.generation.toLowerCase() === generation.toLowerCase()
  for (const { agent, records, homeKey } of REGISTRATIONS) {
    const list = manifest[records]
    const registration = (Array.isArray(list) ? list : []).find(sameGeneration)
    if (registration === undefined) continue
    const home = registration[homeKey]
    if (typeof home !== "string" || !NodePath.isAbsolute(home) || home.includes("\0"))
      return { open: false, reason: "manifest_unreadable" }
    return { open: true, agent, agentHome: home }
  }
  return { open: false, reason: "stale_generation" }
}
