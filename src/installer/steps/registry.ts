import { Effect, Option } from "effect"
import type { ReportCommand } from "../../domain/report.js"
import { AGENT_TARGETS, type AgentTarget, displayIndex, SHARED_STEP_IDS } from "../../domain/step-id.js"
import type { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import type { AgentIntegration } from "../agents/agent-integration.js"
import { AGENTS, agentOf } from "../agents/agents.js"
import type { Step } from "../step.js"
import { backgroundServiceStep } from "./background-service.js"
import { dataDirectoryStep } from "./data-directory.js"
import { embeddingModelStep } from "./embedding-model.js"
import { historyIndexStep } from "./history-index.js"
import { historyRetrievalStep } from "./history-retrieval.js"
import { hooksStep } from "./hooks-step.js"
import { makeMcpHealthStep, mcpSourceOf } from "./mcp-health.js"
import { mcpStep } from "./mcp-step.js"
import { serviceHealthStep } from "./service-health.js"
import { sessionDiscoveryStep } from "./session-discovery.js"
import { skillsStep } from "./skills-step.js"

/** What an agent's target registers with it: its MCP server, its skill and its hooks, one generic step each. */
const agentSteps = <M, S, H>(agent: AgentIntegration<M, S, H>) =>
  [mcpStep(agent), skillsStep(agent), hooksStep(agent)] as const

/** Each target's own steps (what it registers with its agent), and where mcp_health reads its registration. */
const targetSteps = (target: AgentTarget) => {
  const agent = agentOf(target)
  return { steps: agentSteps(agent), mcpSource: mcpSourceOf(agent) }
}

/**
 * The checklist for some targets (one for install and uninstall, every installed one for a
 * status without a target): the shared steps once, each target's own steps, in display order.
 * Prerequisites always come earlier in display order, so running in it runs prerequisites first.
 */
export const stepsFor = (targets: ReadonlyArray<AgentTarget>) =>
  Effect.gen(function* () {
    const own: Array<Step> = []
    for (const target of targets) for (const step of targetSteps(target).steps) own.push(yield* step)
    const sources = []
    for (const target of targets) sources.push(yield* targetSteps(target).mcpSource)
    const steps: ReadonlyArray<Step> = [
      yield* dataDirectoryStep,
      yield* backgroundServiceStep,
      yield* embeddingModelStep,
      yield* sessionDiscoveryStep,
      yield* historyIndexStep,
      yield* serviceHealthStep,
      yield* makeMcpHealthStep(sources),
      yield* historyRetrievalStep,
      ...own
    ]
    return [...steps].sort((a, b) => displayIndex(a.id) - displayIndex(b.id))
  })

/** Every step of `blctx install <first agent>` (Codex), in display order. */
export const installSteps = stepsFor([AGENT_TARGETS[0]])

/**
 * The targets the manifest says are installed: an active installation with something recorded for
 * the target (an MCP registration, a skill or hooks). Shared steps stay while any target is.
 */
export const installedTargets = (manifest: Option.Option<Manifest>): ReadonlyArray<AgentTarget> => {
  if (Option.isNone(manifest) || manifest.value.state !== "active") return []
  const m = manifest.value
  const recorded = (target: AgentTarget) => {
    const { mcp, skills, hooks } = AGENTS[target]
    return [mcp.records, skills.records, hooks.records].some((list) => list.read(m).length > 0)
  }
  return AGENT_TARGETS.filter(recorded)
}

/** The manifest's installed targets; an unreadable manifest counts as none (the data step reports it). */
export const readInstalledTargets = Effect.gen(function* () {
  const manifests = yield* ManifestStore
  const manifest = yield* manifests.read().pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
  return installedTargets(manifest)
})

/**
 * A shared step while another target is still installed: uninstall keeps it (the data, the
 * daemon, the model and the index serve that target too) and says so.
 */
export const keepShared = (step: Step, others: ReadonlyArray<AgentTarget>): Step => ({
  ...step,
  uninstall: () =>
    Effect.succeed({
      detail: `kept: blctx is still installed for ${others.join(" and ")}, which uses it (blctx uninstall ${others.join(" / ")} removes it with the last target)`
    })
})

/**
 * The checklist a command runs for its targets. Uninstall tears the shared steps down only when
 * no other target is installed (decided from the manifest, before anything is removed).
 */
export const checklistFor = (command: ReportCommand, targets: ReadonlyArray<AgentTarget>) =>
  Effect.gen(function* () {
    const steps = yield* stepsFor(targets)
    if (command !== "uninstall") return steps
    const others = (yield* readInstalledTargets).filter((t) => !targets.includes(t))
    if (others.length === 0) return steps
    return steps.map((s) => (SHARED_STEP_IDS.includes(s.id) ? keepShared(s, others) : s))
  })
