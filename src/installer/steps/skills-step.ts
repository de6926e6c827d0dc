import { Effect } from "effect"
import { Paths } from "../../paths/paths.js"
import type { AgentIntegration } from "../agents/agent-integration.js"
import type { Step } from "../step.js"
import { makeSkillFile } from "./skill-file.js"

/**
 * Installs blctx's bundled skill (`skills/base-layer-context/SKILL.md` in the package) as
 * `<agent home>/skills/base-layer-context/SKILL.md`, where the agent discovers it, so agents know
 * when and how to use the base-layer-context MCP tools (codex_skills, claude_skills, gemini_skills).
 *
 * Ownership (`skill-file.ts`) is the manifest's record (agent home, root, path, blctx version,
 * SHA-256), written before the file (with the folders about to be created), so an interrupted
 * install is retried as blctx's own. The file is blctx's only while it hashes to the record: an
 * unchanged one is upgraded, anything else (edited, not recorded, a link, a hard link, a folder)
 * is left untouched and reported, and it is removed from the recorded root even after the agent's
 * home changed. Verification asks the agent where it can (Codex's `skills/list`: listed, enabled,
 * at that path, once), and otherwise checks the file itself. blctx never edits the agent's
 * configuration: a skill a person disabled there stays disabled.
 */
export const skillsStep = <R>(agent: AgentIntegration<unknown, R>) =>
  Effect.gen(function* () {
    const paths = yield* Paths
    const { skills } = agent
    const home = agent.homeOf(paths)
    const id = agent.steps.skills
    const reinstall = `blctx install ${agent.target} --step ${id}`

    const file = yield* makeSkillFile({
      agent: agent.name,
      home,
      homeVariable: skills.homeVariable,
      installCommand: `blctx install ${agent.target}`,
      reinstall,
      uninstallCommand: skills.uninstall,
      missingHome: (h) => skills.missingHome(h, reinstall),
      otherRoots: skills.otherRoots(paths, home),
      recordsOf: skills.records.read,
      withRecords: skills.records.with
    })
    const discovery = yield* skills.discovery

    const verify = Effect.fn(`${agent.span}Skills.verify`)(function* () {
      const record = yield* file.verifyFile()
      return { detail: yield* discovery.confirm(record) }
    })

    const diagnose = Effect.fn(`${agent.span}Skills.diagnose`)(function* () {
      return { detail: yield* discovery.diagnose(file.describeFile) }
    })

    const step: Step = {
      id,
      title: `${agent.name} skills`,
      requires: ["data_directory"],
      install: () => file.install(),
      verify: () => verify(),
      diagnose: () => diagnose(),
      uninstall: () => file.uninstall()
    }
    return step
  })
