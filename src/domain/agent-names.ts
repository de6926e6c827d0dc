/**
 * The coding agents this build knows, by the name `messages.agent`, `blctx install <target>`, the
 * capture records and the manifest's keys (`<name>_mcp`, `<name>_skills`, `<name>_hooks`) use.
 * Declared once, as a literal tuple because those keys are literal types TypeScript cannot derive
 * from the records' runtime arrays; every other list of agents derives from it, and tests check it
 * against the installer's records (AGENTS) and the transcript formats (TRANSCRIPT_FORMATS).
 * Plain data with no imports: the hook handler and the CLI's fast path load it without effect.
 */
export const AGENT_NAMES = ["codex", "claude", "gemini"] as const
export type AgentName = (typeof AGENT_NAMES)[number]

/** What the installer registers with each agent, one step and one manifest list per concern. */
export const AGENT_CONCERNS = ["mcp", "skills", "hooks"] as const
export type AgentConcern = (typeof AGENT_CONCERNS)[number]

/** Each agent's name for people (`claude` → `Claude Code`), which its transcript format carries. */
export const AGENT_LABELS: { readonly [A in AgentName]: string } = {
  codex: "Codex",
  claude: "Claude Code",
  gemini: "Gemini CLI"
}
