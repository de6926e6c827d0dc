import { AGENT_CONCERNS, AGENT_NAMES, type AgentConcern, type AgentName } from "../domain/agent-names.js"

/**
 * The names installation.json gives each agent's records, derived from the agent's name: its
 * records under `<agent>_mcp`, `<agent>_skills` and `<agent>_hooks`, its home in each record under
 * `<agent>_home`, the hooks file under `settings_file`, the person's choice about its hooks under
 * `choices.<agent>_hooks`. Codex's records predate the rule and keep the names they were written
 * with (`hooks_file`, `choices.hooks`): installation.json never changes. Plain data, so the hook
 * handler reads the manifest by these names without loading effect.
 */

/** The manifest key holding one agent's records of one kind: `claude_hooks`. */
export type RecordsKey<A extends AgentName = AgentName, C extends AgentConcern = AgentConcern> = `${A}_${C}`
export type HomeField<A extends AgentName = AgentName> = `${A}_home`
export type HooksFileField<A extends AgentName = AgentName> = A extends "codex" ? "hooks_file" : "settings_file"
export type HooksChoiceKey<A extends AgentName = AgentName> = A extends "codex" ? "hooks" : `${A}_hooks`

export const recordsKey = <A extends AgentName, C extends AgentConcern>(agent: A, concern: C): RecordsKey<A, C> =>
  `${agent}_${concern}`

export const homeField = <A extends AgentName>(agent: A): HomeField<A> => `${agent}_home`

export const hooksFileField = <A extends AgentName>(agent: A): HooksFileField<A> =>
  (agent === "codex" ? "hooks_file" : "settings_file") as HooksFileField<A>

export const hooksChoiceKey = <A extends AgentName>(agent: A): HooksChoiceKey<A> =>
  (agent === "codex" ? "hooks" : `${agent}_hooks`) as HooksChoiceKey<A>

/** Every records key, in the manifest's order: each agent's MCP, skills and hooks lists. */
export const RECORDS_KEYS: ReadonlyArray<RecordsKey> = AGENT_NAMES.flatMap((agent) =>
  AGENT_CONCERNS.map((concern) => recordsKey(agent, concern))
)
