/**
 * The agents whose history blctx keeps, as `messages.agent` names them: `codex` (Codex rollouts)
 * `claude` (Claude Code transcripts) and `gemini` (Gemini CLI sessions). A new agent is one more entry here, beside its
 * transcript format. Effect-free, for the CLI's fast path (src/cli/fast-search.ts).
 */
export const KNOWN_AGENTS = ["codex", "claude", "gemini"] as const
export type KnownAgent = (typeof KNOWN_AGENTS)[number]
