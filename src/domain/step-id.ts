import { Schema } from "effect"

/** The stable step ids, in display order. Scripts and `--step` depend on these names. */
export const STEP_IDS = [
  "data_directory",
  "background_service",
  "codex_mcp",
  "codex_skills",
  "embedding_model",
  "session_discovery",
  "history_index",
  "service_health",
  "mcp_health",
  "history_retrieval",
  "codex_hooks"
] as const

export const StepId = Schema.Literal(...STEP_IDS)
export type StepId = typeof StepId.Type

/** Steps that only `--no-history` may skip. */
export const HISTORY_STEP_IDS: ReadonlyArray<StepId> = ["session_discovery", "history_index", "history_retrieval"]

export const displayIndex = (id: StepId): number => STEP_IDS.indexOf(id)
