import { AGENT_NAMES, type AgentName } from "../domain/agent-names.js"

/**
 * What kind of source a stored message came from: `messages.source_type`. An open set: storage
 * has no CHECK on it (since migration 4), so a new transcript format or a new kind of note adds
 * a value without a migration. The values known to this build:
 *
 * - `codex_transcript`: a Codex rollout file (`$CODEX_HOME/sessions`, `archived_sessions`).
 * - `claude_transcript`: a Claude Code transcript (`$CLAUDE_CONFIG_DIR/projects`, default `~/.claude`).
 * - `gemini_transcript`: a Gemini CLI session (`~/.gemini/tmp/<project>/chats`, `$GEMINI_CLI_HOME`).
 * - `authored_update`: a note written on purpose, stored as one of its revisions.
 *
 * A value is lowercase letters, digits and `_`, starting with a letter, at most 64 characters;
 * agent names (`messages.agent`: `codex`, `claude`, `gemini`) follow the same rule.
 */
export type KnownSourceType = `${AgentName}_transcript` | "authored_update"
/** Each agent's transcripts (`<agent>_transcript`, its format's `sourceType`), then notes. */
export const KNOWN_SOURCE_TYPES = [
  ...AGENT_NAMES.map((agent) => `${agent}_transcript` as const),
  "authored_update"
] as unknown as readonly [KnownSourceType, ...Array<KnownSourceType>]

/** The shape of a source type or agent name (registered formats are checked against it). */
export const SOURCE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/
/** The longest source type a request may name. */
export const MAX_SOURCE_TYPE_CHARS = 64

/** Authored notes rank ahead of transcript echoes of the same text. */
export const AUTHORED_UPDATE: KnownSourceType = "authored_update"
