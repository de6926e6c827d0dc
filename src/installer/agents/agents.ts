import type { AgentTarget } from "../../domain/step-id.js"
import type { AgentIntegration } from "./agent-integration.js"
import { claudeIntegration } from "./claude.js"
import { codexIntegration } from "./codex.js"
import { geminiIntegration } from "./gemini.js"

/** Every agent blctx installs for, by target (`blctx install <target>`). */
export const AGENTS = {
  codex: codexIntegration,
  claude: claudeIntegration,
  gemini: geminiIntegration
} as const satisfies Record<AgentTarget, AgentIntegration>

/** The services some agent's record needs: what serving every agent's steps requires. */
export type AgentNeeds = (typeof AGENTS)[AgentTarget] extends infer A
  ? A extends AgentIntegration<infer M, infer S, infer H>
    ? M | S | H
    : never
  : never

/** Any agent's record, its needs widened to every agent's. */
export type AnyAgent = AgentIntegration<AgentNeeds, AgentNeeds, AgentNeeds>

/** The record of a target, typed for code that serves every agent alike. */
export const agentOf = (target: AgentTarget): AnyAgent => AGENTS[target]
