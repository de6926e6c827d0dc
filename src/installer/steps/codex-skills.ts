import * as NodePath from "node:path"
import { Effect } from "effect"
import { CodexAppServer, type CodexSkill } from "../../codex/codex-app-server.js"
import { CODEX_INSTALL_COMMAND, type CodexError, codexConfigFile } from "../../codex/codex-cli.js"
import { SafeFs } from "../../fs/safe-fs.js"
import type { CodexSkillInstallation } from "../../ownership/manifest.js"
import { Paths } from "../../paths/paths.js"
import { fail, type Step, type StepFailure } from "../step.js"
import { makeSkillFile, SKILL_NAME, type SkillRecord, skillLocation } from "./skill-file.js"

/** The skill's name: its folder in a skills root and the `name:` of its front matter. */
export const CODEX_SKILL_NAME = SKILL_NAME
export { skillLocation }

const REINSTALL = "blctx install codex --step codex_skills"
const STATUS = "blctx status --step codex_skills"
const UNINSTALL = "blctx uninstall codex --step codex_skills"

const toRecord = (r: CodexSkillInstallation): SkillRecord => ({
  home: r.codex_home,
  root: r.root,
  path: r.path,
  version: r.version,
  sha256: r.sha256
})
const fromRecord = (r: SkillRecord): CodexSkillInstallation => ({
  codex_home: r.home,
  root: r.root,
  path: r.path,
  version: r.version,
  sha256: r.sha256
})

/**
 * Installs blctx's bundled skill (`skills/base-layer-context/SKILL.md` in the package) as
 * `$CODEX_HOME/skills/base-layer-context/SKILL.md`, where Codex discovers it, so agents know when
 * and how to use the base-layer-context MCP tools. Verification asks the real Codex
 * (`codex app-server` `skills/list`): the skill must be listed, enabled, at that path, once.
 *
 * Ownership (`skill-file.ts`, shared with claude_skills) is the manifest's `codex_skills` record
 * (Codex home, root, path, blctx version, SHA-256), written before the file (with the folders
 * about to be created), so an interrupted install is retried as blctx's own. The file is blctx's
 * only while it hashes to the record: an unchanged one is upgraded, anything else (edited, not
 * recorded, a link, a hard link, a folder) is left untouched and reported. blctx never edits
 * config.toml: a skill a person disabled there stays disabled.
 */
export const codexSkillsStep = Effect.gen(function* () {
  const codex = yield* CodexAppServer
  const paths = yield* Paths

  const codexHome = paths.codexHome
  const configFile = codexConfigFile(codexHome)
  const defaultHome = NodePath.join(paths.home, ".codex")
  // A copy under ~/.agents/skills, or under Codex's default home when it is not the target,
  // would make Codex discover the skill twice.
  const otherRoots = [NodePath.join(paths.home, ".agents", "skills")]
  if (NodePath.resolve(codexHome) !== defaultHome) otherRoots.push(skillLocation(defaultHome).root)

  const file = yield* makeSkillFile({
    agent: "Codex",
    home: codexHome,
    homeVariable: "CODEX_HOME",
    installCommand: "blctx install codex",
    reinstall: REINSTALL,
    uninstallCommand: UNINSTALL,
    missingHome: (home) => ({
      detail: `the Codex home ${home} does not exist`,
      remediation: `Start Codex once (or create the folder: mkdir -p ${home}), then run: ${REINSTALL}`
    }),
    otherRoots,
    recordsOf: (m) => (m.codex_skills ?? []).map(toRecord),
    withRecords: ({ codex_skills: _previous, ...rest }, records) => ({
      ...rest,
      ...(records.length > 0 ? { codex_skills: records.map(fromRecord) } : {})
    })
  })

  const fromCodex =
    (next: string) =>
    (e: CodexError): StepFailure =>
      e._tag === "CodexNotFound"
        ? fail(
            `${e.message}; blctx asks Codex which skills it discovers`,
            `Install Codex: ${CODEX_INSTALL_COMMAND} (or put codex on PATH), then run: ${next}`,
            e._tag
          )
        : fail(
            e.message,
            `Check that codex starts with this home (CODEX_HOME=${e.codexHome} codex) and fix what it reports in ${codexConfigFile(e.codexHome)}, then run: ${next}`,
            e._tag
          )

  const fs = yield* SafeFs

  /** Codex's own view: listed once, at the recorded path, enabled. */
  const askCodex = (record: SkillRecord) =>
    Effect.gen(function* () {
      const listing = yield* codex.listSkills(codexHome, paths.home).pipe(Effect.mapError(fromCodex(STATUS)))
      const real = yield* fs.realPath(record.path).pipe(Effect.orElseSucceed(() => record.path))
      const isOurs = (s: CodexSkill) => s.path === record.path || s.path === real
      const named = listing.skills.filter((s) => s.name === CODEX_SKILL_NAME)
      const ours = named.find(isOurs)
      if (ours === undefined) {
        const error = listing.errors.find((e) => e.path === record.path || e.path === real)
        return yield* fail(
          `Codex does not list the skill at ${record.path}${error === undefined ? "" : `: ${error.message}`}`,
          `Check ${record.path} (Codex lists its skills with /skills), then run: ${REINSTALL}`
        )
      }
      const others = named.filter((s) => !isOurs(s))
      if (others.length > 0) {
        return yield* fail(
          `Codex discovers ${CODEX_SKILL_NAME} twice: at ${record.path} and at ${others.map((s) => s.path).join(", ")}`,
          `Remove the other copy (${others.map((s) => NodePath.dirname(s.path)).join(", ")}) if it is an old one, then run: ${STATUS}`
        )
      }
      if (!ours.enabled) {
        return yield* fail(
          `the ${CODEX_SKILL_NAME} skill at ${record.path} is disabled in ${configFile} [[skills.config]] (enabled = false); blctx leaves it disabled`,
          `To use it, remove that [[skills.config]] entry for ${record.path} from ${configFile} (or set enabled = true).`
        )
      }
    })

  const verify = Effect.fn("CodexSkills.verify")(function* () {
    const record = yield* file.verifyFile()
    yield* askCodex(record)
    return { detail: `Codex lists ${CODEX_SKILL_NAME} at ${record.path}, enabled (blctx ${record.version})` }
  })

  /** Doctor: every copy Codex lists under the name, what it could not load, the file on disk and blctx's records. */
  const diagnose = Effect.fn("CodexSkills.diagnose")(function* () {
    const listing = yield* codex.listSkills(codexHome, paths.home).pipe(Effect.mapError(fromCodex(STATUS)))
    const named = listing.skills.filter((s) => s.name === CODEX_SKILL_NAME)
    const listed =
      named.length === 0
        ? `no skill named ${CODEX_SKILL_NAME}`
        : named.map((s) => `${s.path} (${s.scope}, ${s.enabled ? "enabled" : "disabled"})`).join(", ")
    const errors = listing.errors.filter((e) => e.path.includes(CODEX_SKILL_NAME))
    const unloadable =
      errors.length === 0 ? "" : `; Codex could not load ${errors.map((e) => `${e.path}: ${e.message}`).join(", ")}`
    const onDisk = yield* file.describeFile
    return { detail: `Codex (CODEX_HOME ${codexHome}) lists ${listed}${unloadable}; ${onDisk}` }
  })

  const step: Step = {
    id: "codex_skills",
    title: "Codex skills",
    requires: ["data_directory"],
    install: () => file.install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => file.uninstall()
  }
  return step
})
