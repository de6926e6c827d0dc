import { Schema } from "effect"

/** The stable step ids, in display order. Scripts and `--step` depend on these names. */
export const STEP_IDS = [
  "data_directory",
  "background_service",
  "codex_mcp",
  "codex_skills",
  "claude_mcp",
  "claude_skills",
  "gemini_mcp",
  "gemini_skills",
  "embedding_model",
  "session_discovery",
  "history_index",
  "service_health",
  "mcp_health",
  "history_retrieval",
  "codex_hooks",
  "claude_hooks",
  "gemini_hooks"
] as const

export const StepId = Schema.Literal(...STEP_IDS)
export type StepId = typeof StepId.Type

/** Steps that only `--no-history` may skip. */
export const HISTORY_STEP_IDS: ReadonlyArray<StepId> = ["session_discovery", "history_index", "history_retrieval"]

export const displayIndex = (id: StepId): number => STEP_IDS.indexOf(id)

/** The agents blctx installs for (`blctx install <target>`). */
export const AGENT_TARGETS = ["codex", "claude", "gemini"] as const
export const AgentTarget = Schema.Literal(...AGENT_TARGETS)
export type AgentTarget = typeof AgentTarget.Type

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
export const TARGET_STEP_IDS: Readonly<Record<AgentTarget, ReadonlyArray<StepId>>> = {
  codex: ["codex_mcp", "codex_skills", "codex_hooks"],
  claude: ["claude_mcp", "claude_skills", "claude_hooks"],
  gemini: ["gemini_mcp", "gemini_skills", "gemini_hooks"]
}

/** A target's whole checklist (shared and own steps), in display order. */
export const stepIdsFor = (targets: ReadonlyArray<AgentTarget>): ReadonlyArray<StepId> => {
  const own = new Set(targets.flatMap((t) => TARGET_STEP_IDS[t]))
  return STEP_IDS.filter((id) => SHARED_STEP_IDS.includes(id) || own.has(id))
}

/** The target a target-specific step belongs to; none for a shared step. */
export const targetOfStep = (id: StepId): AgentTarget | undefined =>
  AGENT_TARGETS.find((t) => TARGET_STEP_IDS[t].includes(id))
