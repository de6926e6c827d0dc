import * as v from "valibot"
import { AGENT_NAMES, type AgentName } from "../domain/agent-names.js"
import { HOOK_EVENTS, MAX_EVENT_SESSION_ID_CHARS, MAX_HOOK_PATH_CHARS } from "./hook-event.js"

/**
 * One captured hook event, as the hook handler spools it and the daemon drains it: one JSON file
 * per event in the spool directory (see capture-spool.ts). Small and free of conversation text:
 * the transcript holds the words; a capture only says which transcript to (re)index and when.
 * Valibot for the same start-up reason as hook-event.ts; this module must not import `effect`.
 */
export const CAPTURE_RECORD_VERSION = 1

/** The agents whose hooks blctx registers (`<agent>_hooks` in the manifest): every agent it knows. */
export const CAPTURE_AGENTS = AGENT_NAMES
export type CaptureAgent = AgentName

const Uuid = v.pipe(v.string(), v.uuid())
const Absolute = v.pipe(
  v.string(),
  v.maxLength(MAX_HOOK_PATH_CHARS),
  v.check((p) => p.startsWith("/"))
)

export const CaptureRecord = v.object({
  v: v.literal(CAPTURE_RECORD_VERSION),
  installation_id: Uuid,
  /** The hook registration's generation: a capture from an older one is discarded at drain. */
  generation: Uuid,
  agent: v.picklist(CAPTURE_AGENTS),
  /**
   * The agent's home of the hook's registration (CODEX_HOME, or Claude Code's CLAUDE_CONFIG_DIR):
   * the scope the event session id is a hint within.
   */
  agent_home: Absolute,
  event: v.picklist(HOOK_EVENTS),
  /** The agent's session id: a lookup hint only, never blctx's identity for the session. */
  event_session_id: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_EVENT_SESSION_ID_CHARS)),
  /** blctx's own binding key (a UUID) for this (agent_home, event_session_id): see binding-store.ts. */
  binding_key: Uuid,
  /** blctx's own session UUID for the binding. */
  session_uuid: Uuid,
  /** Codex's turn id, or Claude Code's prompt id (it has no turn id). */
  turn_id: v.nullable(v.pipe(v.string(), v.maxLength(MAX_EVENT_SESSION_ID_CHARS))),
  cwd: Absolute,
  transcript_path: v.nullable(Absolute),
  /** ISO 8601 UTC. */
  received_at: v.pipe(v.string(), v.isoTimestamp())
})
export type CaptureRecord = v.InferOutput<typeof CaptureRecord>
