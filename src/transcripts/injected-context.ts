/**
 * Context Codex injects as `role: user` messages: each fragment starts with a known marker
 * (codex-rs `ContextualUserFragment` implementations). Such text is context, never a request.
 */
const MARKERS: ReadonlyArray<readonly [prefix: string, name: string]> = [
  ["# AGENTS.md instructions for ", "AGENTS.md instructions"],
  ["<INSTRUCTIONS>", "AGENTS.md instructions"],
  ["<user_instructions>", "user instructions"],
  ["<environment_context>", "environment context"],
  ["<skill>", "skill instructions"],
  ["<user_shell_command>", "user shell command and output"],
  ["<turn_aborted>", "turn aborted notice"],
  ["<subagent_notification>", "sub-agent notification"],
  ["<external_", "hook or extension context"],
  ["<hook_prompt", "hook prompt"],
  ["<goal_context>", "goal context"],
  ["<context_changes>", "context changes"],
  ["<WORKSPACE_SNAPSHOT>", "workspace snapshot"],
  ["<permissions instructions>", "permissions instructions"],
  ["<collaboration_mode>", "collaboration mode instructions"],
  ["<model_switch>", "model switch notice"],
  ["<personality_spec>", "personality instructions"],
  ["<apps_instructions>", "apps instructions"],
  ["<skills_instructions>", "skills instructions"],
  ["<plugins_instructions>", "plugins instructions"]
]

/** The kind of injected context `text` is, or null when it is not injected context. */
export const injectedContextKind = (text: string): string | null => {
  const trimmed = text.trimStart()
  for (const [prefix, name] of MARKERS) if (trimmed.startsWith(prefix)) return name
  return null
}
