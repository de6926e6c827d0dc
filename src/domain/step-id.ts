import { Schema } from "effect"
import { AGENT_CONCERNS, AGENT_NAMES, type AgentConcern, type AgentName } from "./agent-names.js"

export { AGENT_CONCERNS, type AgentConcern }
/** An agent's step for one concern: `<agent>_<concern>`. */
export type AgentStepId<A extends AgentName = AgentName, C extends AgentConcern = AgentConcern> = `${A}_${C}`

/** One agent's step for one concern. */
export const agentStepId = <A extends AgentName, C extends AgentConcern>(agent: A, concern: C): AgentStepId<A, C> =>
  `${agent}_${concern}`

const eachAgent = <C extends AgentConcern>(concern: C): ReadonlyArray<AgentStepId<AgentName, C>> =>
  AGENT_NAMES.map((agent) => agentStepId(agent, concern))

/**
 * The stable step ids, in display order: each agent's MCP and skills steps after the service,
 * its hooks steps last. Scripts and `--step` depend on these names.
 */
export const STEP_IDS = [
  "data_directory",
  "background_service",
  ...AGENT_NAMES.flatMap((agent) => [agentStepId(agent, "mcp"), agentStepId(agent, "skills")]),
  "embedding_model",
  "session_discovery",
  "history_index",
  "service_health",
  "mcp_health",
  "history_retrieval",
  ...eachAgent("hooks")
] as const

export type StepId =
  | "data_directory"
  | "background_service"
  | "embedding_model"
  | "session_discovery"
  | "history_index"
  | "service_health"
  | "mcp_health"
  | "history_retrieval"
  | AgentStepId
export const StepId: Schema.Schema<StepId> = Schema.Literal(...(STEP_IDS as ReadonlyArray<StepId> as [StepId]))

/** Steps that only `--no-history` may skip. */
export const HISTORY_STEP_IDS: ReadonlyArray<StepId> = ["session_discovery", "history_index", "history_retrieval"]

export const displayIndex = (id: StepId): number => STEP_IDS.indexOf(id)

/** The agents blctx installs for (`blctx install <target>`). */
export const AGENT_TARGETS = AGENT_NAMES
export const AgentTarget = Schema.Literal(...AGENT_NAMES)
export type AgentTarget = AgentName

/**
 * Steps every target shares: one data directory, one daemon, one model, one index. They are set
 * up by the first target's install and torn down only when no other target is installed.
 */
export const SHARED_STEP_IDS: ReadonlyArray<StepId> = [
  "data_directory",
  "background_service",
  "embedding_model",
  "session_discovery",
  "history_index",
  "service_health",
  "mcp_health",
  "history_retrieval"
]

/** Each target's own steps: what it registers with its agent. */
export const TARGET_STEP_IDS = Object.fromEntries(
  AGENT_NAMES.map((agent) => [agent, AGENT_CONCERNS.map((concern) => agentStepId(agent, concern))])
) as unknown as Readonly<{ [A in AgentTarget]: ReadonlyArray<AgentStepId<A>> }>

/** A target's whole checklist (shared and own steps), in display order. */
export const stepIdsFor = (targets: ReadonlyArray<AgentTarget>): ReadonlyArray<StepId> => {
  const own = new Set<StepId>(targets.flatMap((t) => TARGET_STEP_IDS[t]))
  return STEP_IDS.filter((id) => SHARED_STEP_IDS.includes(id) || own.has(id))
}

/** The target a target-specific step belongs to; none for a shared step. */
export const targetOfStep = (id: StepId): AgentTarget | undefined =>
  AGENT_TARGETS.find((t) => (TARGET_STEP_IDS[t] as ReadonlyArray<StepId>).includes(id))
