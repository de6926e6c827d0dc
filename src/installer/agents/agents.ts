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
