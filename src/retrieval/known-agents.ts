import { AGENT_NAMES, type AgentName } from "../domain/agent-names.js"

/**
 * The agents whose history blctx keeps, as `messages.agent` names them: `codex` (Codex rollouts)
 * `claude` (Claude Code transcripts) and `gemini` (Gemini CLI sessions). They are the agents this build
 * knows (src/domain/agent-names.ts). Effect-free, for the CLI's fast path (src/cli/fast-search.ts).
 */
export const KNOWN_AGENTS = AGENT_NAMES
export type KnownAgent = AgentName
