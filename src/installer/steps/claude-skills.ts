import { Effect } from "effect"
import type { ClaudeSkillInstallation } from "../../ownership/manifest.js"
import { Paths } from "../../paths/paths.js"
import type { Step } from "../step.js"
import { makeSkillFile, SKILL_NAME, type SkillRecord } from "./skill-file.js"

const REINSTALL = "blctx install claude --step claude_skills"
const UNINSTALL = "blctx uninstall claude"

const toRecord = (r: ClaudeSkillInstallation): SkillRecord => ({
  home: r.claude_home,
  root: r.root,
  path: r.path,
  version: r.version,
  sha256: r.sha256
})
const fromRecord = (r: SkillRecord): ClaudeSkillInstallation => ({
  claude_home: r.home,
  root: r.root,
  path: r.path,
  version: r.version,
  sha256: r.sha256
})

/**
 * Installs the bundled skill as `<CLAUDE_CONFIG_DIR or ~/.claude>/skills/base-layer-context/SKILL.md`,
 * where Claude Code discovers personal skills, with exactly codex_skills' ownership rules
 * (`skill-file.ts`): recorded in the manifest's `claude_skills` before it is written, blctx's only
 * while it hashes to the record, anything else (edited, unrecorded, a link, a hard link, a folder)
 * left untouched and reported, and removed from the recorded root even after CLAUDE_CONFIG_DIR
 * changed. Claude Code has no command that lists skills without starting a session, so status
 * checks the file itself: present, a plain file, with the recorded hash of this build's skill.
 */
export const claudeSkillsStep = Effect.gen(function* () {
  const paths = yield* Paths
  const file = yield* makeSkillFile({
    agent: "Claude Code",
    home: paths.claudeHome,
    homeVariable: "CLAUDE_CONFIG_DIR",
    installCommand: "blctx install claude",
    reinstall: REINSTALL,
    uninstallCommand: UNINSTALL,
    missingHome: (home) => ({
      detail: `Claude Code's configuration directory ${home} does not exist`,
      remediation: `Start Claude Code once (or create the folder: mkdir -p ${home}), then run: ${REINSTALL}`
    }),
    // Claude Code reads personal skills from its configuration directory only.
    otherRoots: [],
    recordsOf: (m) => (m.claude_skills ?? []).map(toRecord),
    withRecords: ({ claude_skills: _previous, ...rest }, records) => ({
      ...rest,
      ...(records.length > 0 ? { claude_skills: records.map(fromRecord) } : {})
    })
  })

  const verify = Effect.fn("ClaudeSkills.verify")(function* () {
    const record = yield* file.verifyFile()
    return { detail: `${SKILL_NAME} is at ${record.path} as blctx wrote it (blctx ${record.version})` }
  })

  const diagnose = Effect.fn("ClaudeSkills.diagnose")(function* () {
    const onDisk = yield* file.describeFile
    return { detail: `Claude Code configuration ${paths.claudeHome}: ${onDisk}` }
  })

  const step: Step = {
    id: "claude_skills",
    title: "Claude Code skills",
    requires: ["data_directory"],
    install: () => file.install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => file.uninstall()
  }
  return step
})
