import { Effect } from "effect"
import type { Step } from "../step.js"
import { backgroundServiceStep } from "./background-service.js"
import { codexHooksStep } from "./codex-hooks.js"
import { codexMcpStep } from "./codex-mcp.js"
import { codexSkillsStep } from "./codex-skills.js"
import { dataDirectoryStep } from "./data-directory.js"
import { embeddingModelStep } from "./embedding-model.js"
import { historyIndexStep } from "./history-index.js"
import { historyRetrievalStep } from "./history-retrieval.js"
import { mcpHealthStep } from "./mcp-health.js"
import { serviceHealthStep } from "./service-health.js"
import { sessionDiscoveryStep } from "./session-discovery.js"

/**
 * Every step of `blctx install codex`, in display order. Prerequisites always come earlier in
 * this list, so running in display order runs prerequisites first.
 */
export const installSteps = Effect.gen(function* () {
  const steps: ReadonlyArray<Step> = [
    yield* dataDirectoryStep,
    yield* backgroundServiceStep,
    yield* codexMcpStep,
    yield* codexSkillsStep,
    yield* embeddingModelStep,
    yield* sessionDiscoveryStep,
    yield* historyIndexStep,
    yield* serviceHealthStep,
    yield* mcpHealthStep,
    yield* historyRetrievalStep,
    yield* codexHooksStep
  ]
  return steps
})
