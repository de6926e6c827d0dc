import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { DateTime, Effect, Option } from "effect"
import type { PathSwapped } from "../../fs/path-swapped.js"
import { readVerified } from "../../fs/read-verified.js"
import { removeVerified } from "../../fs/remove-verified.js"
import { type FsError, SafeFs, type StatEntry } from "../../fs/safe-fs.js"
import { writeReplacing } from "../../fs/write-replacing.js"
import { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { VERSION } from "../../version.js"
import { SKILL_NAME, type SkillRecord } from "../agents/agent-integration.js"
import { fail, type StepFailure } from "../step.js"
import { checkAgentHomePath } from "./agent-home-ownership.js"
import { stepManifest } from "./step-manifest.js"

/**
 * The file-ownership rules of the bundled skill, shared by every agent's skill step (codex_skills,
 * claude_skills): where the file goes, when it is blctx's, what is refused, and how it is removed.
 * An agent's step adds only how it confirms the agent sees the skill.
 */

export { SKILL_NAME, type SkillRecord }

/**
 * Folders blctx creates are private; the file is 0600 too: only this user's agent reads it, and
 * blctx creates nothing wider than private (its umask is 077). The content is no secret, but
 * nobody else needs it either.
 */
const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600

/** A skill file larger than this is not blctx's (the bundled one is a few KiB) and is not read. */
const MAX_SKILL_BYTES = 1024 * 1024

/** Where the skill lives in an agent's home: the skills root it reads, the skill's folder, its file. */
export const skillLocation = (agentHome: string) => {
  const root = NodePath.join(agentHome, "skills")
  const dir = NodePath.join(root, SKILL_NAME)
  return { root, dir, path: NodePath.join(dir, "SKILL.md") }
}

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")
export const short = (hash: string) => hash.slice(0, 12)

/** What is at the skill file's path, read without following a link. */
export type FileState =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Link" }
  | { readonly _tag: "NotFile"; readonly kind: string }
  | { readonly _tag: "Hardlinked"; readonly nlink: number }
  /** A plain file with one name; `entry` is what was checked, for the write or removal after. */
  | { readonly _tag: "Regular"; readonly sha256: string; readonly entry: StatEntry }

/** The file judged against blctx's record and the bundled skill. */
type Judgement =
  | { readonly _tag: "Absent" }
  /** Holds exactly the bundled skill, and blctx recorded a skill here. */
  | { readonly _tag: "Current" }
  /** Holds what blctx wrote (an older bundled skill), unchanged since. */
  | { readonly _tag: "Outdated" }
  /** blctx wrote it, and it was changed since. */
  | { readonly _tag: "Edited"; readonly sha256: string }
  /** blctx recorded nothing here: someone else's file. */
  | { readonly _tag: "Foreign" }
  | { readonly _tag: "Refused"; readonly failure: StepFailure }

type ManifestFields = ConstructorParameters<typeof Manifest>[0]

/** What differs between agents: names, commands, where the records live in the manifest. */
export interface SkillAgent {
  /** The agent as a person names it: `Codex`, `Claude Code`. */
  readonly agent: string
  /** The agent's home (CODEX_HOME, CLAUDE_CONFIG_DIR) this run works on. */
  readonly home: string
  /** The variable that names that home, as messages say it: `CODEX_HOME`. */
  readonly homeVariable: string
  /** `blctx install codex`: what to run when blctx is not installed. */
  readonly installCommand: string
  readonly reinstall: string
  readonly uninstallCommand: string
  /** What to say when the agent's home does not exist. */
  readonly missingHome: (home: string) => { readonly detail: string; readonly remediation: string }
  /** Other skills roots where a copy would make the agent discover the skill twice. */
  readonly otherRoots: ReadonlyArray<string>
  readonly recordsOf: (m: Manifest) => ReadonlyArray<SkillRecord>
  /** The manifest's fields with this agent's records replaced (none: the field left out). */
  readonly withRecords: (fields: ManifestFields, records: ReadonlyArray<SkillRecord>) => ManifestFields
}

/** The services the skill file's effects use; `makeSkillFile` provides the ones it was built with. */
type SkillFileNeeds = ManifestStore | ProgramPaths | SafeFs

/** An error of the file system said as a step failure, naming what to run once it is fixed. */
const fromFs = (next: string) => (e: FsError | PathSwapped) =>
  e._tag === "PathSwapped"
    ? fail(e.message, `Find out what replaced ${e.path}, then run: ${next}`)
    : fail(`${e.op} ${e.path} failed: ${e.message}`, `Check the permissions of ${e.path}, then run: ${next}`)

/** The manifest as this agent's step reads it (`readActive` names the command that installs). */
const manifestOf = (agent: SkillAgent) =>
  Effect.map(ManifestStore, (manifests) => stepManifest(manifests, agent.installCommand))

/** The skill this build ships, read from the package. */
const bundledSkill = (agent: SkillAgent) =>
  Effect.gen(function* () {
    const programs = yield* ProgramPaths
    const fs = yield* SafeFs
    return yield* fs.readText(programs.skill).pipe(
      Effect.map((text) => ({ text, sha256: sha256(text) })),
      Effect.mapError((e) =>
        fail(
          `the bundled skill ${programs.skill} could not be read: ${e.message}`,
          `Reinstall blctx (its package ships skills/${SKILL_NAME}/SKILL.md), then run: ${agent.reinstall}`
        )
      )
    )
  })

const recordOf = (agent: SkillAgent, m: Manifest, h: string) => agent.recordsOf(m).find((r) => r.home === h)

const withRecord = (agent: SkillAgent, m: Manifest, record: SkillRecord) => [
  ...agent.recordsOf(m).filter((r) => r.home !== record.home),
  record
]

/** Writes the skill records and the created folders into the manifest. */
const writeManifest = (
  agent: SkillAgent,
  m: Manifest,
  records: ReadonlyArray<SkillRecord>,
  created: ReadonlyArray<string> = m.created_directories
) =>
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const updated_at = DateTime.formatIso(yield* DateTime.now)
    const fields = agent.withRecords({ ...m, created_directories: created, updated_at }, records)
    yield* manifests
      .write(new Manifest(fields))
      .pipe(
        Effect.mapError((e) =>
          fail(`could not record the skill in ${manifests.path}: ${e.message}`, "Check the state directory.")
        )
      )
  })

const linkRefused = (agent: SkillAgent, path: string, next: string) =>
  fail(
    `${path} is a symbolic link; blctx does not write through links into ${agent.agent}'s skills, so it was left untouched`,
    `Replace ${path} with a real ${path === skillLocation(agent.home).path ? "file" : "directory"} (or remove it), then run: ${next}`
  )

/**
 * The skills root and the skill's folder, outermost first: the missing ones (blctx would create
 * them), or a refusal for a link or something other than a folder.
 */
const missingDirectories = (agent: SkillAgent, dirs: ReadonlyArray<string>, next = agent.reinstall) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const missing: Array<string> = []
    for (const dir of dirs) {
      if (missing.length > 0) {
        missing.push(dir)
        continue
      }
      const entry = yield* fs.lstat(dir).pipe(Effect.mapError(fromFs(next)))
      if (Option.isNone(entry)) missing.push(dir)
      else if (entry.value.kind === "symlink") return yield* linkRefused(agent, dir, next)
      else if (entry.value.kind !== "directory") {
        return yield* fail(
          `${dir} exists and is not a directory (it is a ${entry.value.kind}); it was left untouched`,
          `Move ${dir} aside, then run: ${next}`
        )
      }
    }
    return missing
  })

const inspectFile = (path: string, next: string) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const entry = yield* fs.lstat(path).pipe(Effect.mapError(fromFs(next)))
    if (Option.isNone(entry)) return { _tag: "Absent" } as FileState
    const e = entry.value
    if (e.kind === "symlink") return { _tag: "Link" } as FileState
    if (e.kind !== "file") return { _tag: "NotFile", kind: e.kind } as FileState
    if (e.nlink > 1) return { _tag: "Hardlinked", nlink: e.nlink } as FileState
    if (e.size > MAX_SKILL_BYTES)
      return { _tag: "Regular", sha256: `larger than ${MAX_SKILL_BYTES} bytes`, entry: e } as FileState
    // Hashed through a descriptor of the file just checked, never by its path again.
    const text = yield* readVerified(path, e).pipe(Effect.mapError(fromFs(next)))
    return { _tag: "Regular", sha256: sha256(text), entry: e } as FileState
  })

/** The file where the folders are all there, else absent without looking. */
const inspectIfPresent = (missing: ReadonlyArray<string>, path: string, next: string) =>
  missing.length > 0 ? Effect.succeed<FileState>({ _tag: "Absent" }) : inspectFile(path, next)

const refusal = (agent: SkillAgent, path: string, state: FileState, next: string): Option.Option<StepFailure> => {
  switch (state._tag) {
    case "Link":
      return Option.some(linkRefused(agent, path, next))
    case "NotFile":
      return Option.some(
        fail(
          `${path} exists and is not a regular file (it is a ${state.kind}); it was left untouched`,
          `Move ${path} aside, then run: ${next}`
        )
      )
    case "Hardlinked":
      return Option.some(
        fail(
          `${path} has ${state.nlink} hard links, so writing it would change another file too; it was left untouched`,
          `Remove ${path} (its other names keep the content), then run: ${next}`
        )
      )
    default:
      return Option.none()
  }
}

const judge = (agent: SkillAgent, state: FileState, record: SkillRecord | undefined, bundledSha: string): Judgement => {
  const refused = refusal(agent, skillLocation(agent.home).path, state, agent.reinstall)
  if (Option.isSome(refused)) return { _tag: "Refused", failure: refused.value }
  if (state._tag !== "Regular") return { _tag: "Absent" }
  if (record === undefined) return { _tag: "Foreign" }
  // The bundled content with a record: current, or an update interrupted before it was recorded.
  if (state.sha256 === bundledSha) return { _tag: "Current" }
  if (state.sha256 === record.sha256) return { _tag: "Outdated" }
  return { _tag: "Edited", sha256: state.sha256 }
}

const edited = (agent: SkillAgent, path: string, now: string, record: SkillRecord) =>
  fail(
    `${path} was changed after blctx wrote it (SHA-256 ${short(now)}…, blctx wrote ${short(record.sha256)}…); it was left untouched`,
    `To let blctx write it again, remove it (rm ${path}), then run: ${agent.reinstall}. To keep your version, leave it: blctx will not change it.`
  )

const foreign = (agent: SkillAgent, path: string, what: string) =>
  fail(
    `${path} already exists and blctx did not ${what} it; it was left untouched`,
    `If it is an old copy you no longer need, remove it, then run: ${agent.reinstall}`
  )

/** Another copy under the agent's other user roots would make it discover the skill twice. */
const otherCopies = (agent: SkillAgent, m: Manifest) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    for (const root of agent.otherRoots) {
      const copy = NodePath.join(root, SKILL_NAME)
      if (Option.isNone(yield* fs.lstat(copy).pipe(Effect.mapError(fromFs(agent.reinstall))))) continue
      const ours = agent.recordsOf(m).find((r) => NodePath.dirname(r.path) === copy)
      return yield* fail(
        `another skill named ${SKILL_NAME} is at ${copy}: with ${skillLocation(agent.home).path} ${agent.agent} would discover it twice, so nothing was written`,
        ours === undefined
          ? `If it is an old copy, remove it (rm -r ${copy}), then run: ${agent.reinstall}`
          : `It is the copy blctx installed for ${agent.homeVariable} ${ours.home}: run ${agent.uninstallCommand}, then: ${agent.reinstall}`
      )
    }
  })

/** The agent's home must exist: blctx does not create it. */
const requireHome = (agent: SkillAgent) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    if (Option.isNone(yield* fs.lstat(agent.home).pipe(Effect.mapError(fromFs(agent.reinstall))))) {
      const missing = agent.missingHome(agent.home)
      return yield* fail(missing.detail, missing.remediation)
    }
  })

const ownership = (agent: SkillAgent, path: string) =>
  Effect.flatMap(SafeFs, (fs) => checkAgentHomePath(fs, path, agent.agent, agent.reinstall))

/** A folder of the skill's name that blctx neither created nor recorded is someone else's skill. */
const refuseForeignFolder = (agent: SkillAgent, m: Manifest, missing: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const target = skillLocation(agent.home)
    const record = recordOf(agent, m, agent.home)
    if (missing.includes(target.dir) || record !== undefined || m.created_directories.includes(target.dir)) return
    const file = yield* inspectFile(target.path, agent.reinstall)
    return yield* foreign(
      agent,
      file._tag === "Absent" ? target.dir : target.path,
      file._tag === "Absent" ? "create" : "write"
    )
  })

/** What install starts from: the manifest, the bundled skill, the missing folders, all checked. */
const installPlan = (agent: SkillAgent) =>
  Effect.gen(function* () {
    const target = skillLocation(agent.home)
    const m = yield* Effect.flatMap(manifestOf(agent), (manifest) => manifest.readActive)
    const skill = yield* bundledSkill(agent)
    yield* requireHome(agent)
    yield* otherCopies(agent, m)
    const missing = yield* missingDirectories(agent, [target.root, target.dir])
    yield* ownership(agent, target.path)
    yield* refuseForeignFolder(agent, m, missing)
    const state: FileState = missing.includes(target.dir)
      ? { _tag: "Absent" }
      : yield* inspectFile(target.path, agent.reinstall)
    const desired: SkillRecord = {
      home: agent.home,
      root: target.root,
      path: target.path,
      version: VERSION,
      sha256: skill.sha256
    }
    return { m, skill, missing, state, record: recordOf(agent, m, agent.home), desired }
  })

type InstallPlan = Effect.Effect.Success<ReturnType<typeof installPlan>>

/** Writes the bundled skill, only over what was judged: nothing when absent, else the very file that was hashed. */
const writeSkill = (agent: SkillAgent, plan: InstallPlan) =>
  writeReplacing(
    skillLocation(agent.home).path,
    plan.skill.text,
    FILE_MODE,
    plan.state._tag === "Regular" ? Option.some(plan.state.entry) : Option.none()
  ).pipe(Effect.mapError(fromFs(agent.reinstall)))

/**
 * Recorded first, with the folders about to be made: if anything stops us now, a rerun still
 * treats the file and folders as blctx's.
 */
const installAbsent = (agent: SkillAgent, plan: InstallPlan) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const { m, missing } = plan
    const created = [...new Set([...m.created_directories, ...missing])]
    yield* writeManifest(agent, m, withRecord(agent, m, plan.desired), created)
    for (const dir of missing)
      yield* fs.makeDirectory(dir, DIRECTORY_MODE).pipe(Effect.mapError(fromFs(agent.reinstall)))
    yield* writeSkill(agent, plan)
    return { detail: `installed the ${SKILL_NAME} skill at ${skillLocation(agent.home).path} (blctx ${VERSION})` }
  })

/** Written, then recorded: until then the file is blctx's by either hash. */
const installOutdated = (agent: SkillAgent, plan: InstallPlan) =>
  Effect.gen(function* () {
    yield* writeSkill(agent, plan)
    yield* writeManifest(agent, plan.m, withRecord(agent, plan.m, plan.desired))
    return {
      detail: `updated ${skillLocation(agent.home).path} to the skill blctx ${VERSION} ships (it held the one blctx ${plan.record?.version} wrote)`
    }
  })

/** Already the bundled skill: only a stale record is brought up to date. */
const installCurrent = (agent: SkillAgent, plan: InstallPlan) =>
  Effect.gen(function* () {
    const { record, desired } = plan
    if (record?.sha256 !== desired.sha256 || record.version !== desired.version || record.root !== desired.root) {
      yield* writeManifest(agent, plan.m, withRecord(agent, plan.m, desired))
    }
    return { detail: `${skillLocation(agent.home).path} already holds blctx ${VERSION}'s skill, left as is` }
  })

const installSkill = Effect.fn("SkillFile.install")(function* (agent: SkillAgent) {
  const plan = yield* installPlan(agent)
  const path = skillLocation(agent.home).path
  const judged = judge(agent, plan.state, plan.record, plan.skill.sha256)
  switch (judged._tag) {
    case "Refused":
      return yield* judged.failure
    case "Foreign":
      return yield* foreign(agent, path, "write")
    case "Edited":
      return yield* edited(agent, path, judged.sha256, plan.record ?? plan.desired)
    case "Absent":
      return yield* installAbsent(agent, plan)
    case "Outdated":
      return yield* installOutdated(agent, plan)
    case "Current":
      return yield* installCurrent(agent, plan)
  }
})

/** The recorded file, checked against its record and the skill this build ships. */
const checkRecordedFile = (agent: SkillAgent, record: SkillRecord, state: FileState, skillSha: string) =>
  Effect.gen(function* () {
    const refused = refusal(agent, record.path, state, agent.reinstall)
    if (Option.isSome(refused)) return yield* refused.value
    if (state._tag !== "Regular") {
      return yield* fail(`${record.path} is missing (it was removed after install)`, `Run: ${agent.reinstall}`)
    }
    if (state.sha256 !== record.sha256) {
      if (state.sha256 === skillSha) {
        return yield* fail(
          `${record.path} holds blctx ${VERSION}'s skill but blctx's record is of blctx ${record.version}'s (an update was interrupted)`,
          `Run: ${agent.reinstall}`
        )
      }
      return yield* edited(agent, record.path, state.sha256, record)
    }
    if (record.sha256 !== skillSha) {
      return yield* fail(
        `${record.path} holds the skill blctx ${record.version} wrote, not the one this build ships (blctx ${VERSION})`,
        `Run: ${agent.reinstall}`
      )
    }
  })

/**
 * The file as recorded: present, a plain file, holding what blctx wrote, and that is what this
 * build ships. Returns the record, for the agent's own check.
 */
const verifySkillFile = Effect.fn("SkillFile.verify")(function* (agent: SkillAgent) {
  const m = yield* Effect.flatMap(manifestOf(agent), (manifest) => manifest.readActive)
  const record = recordOf(agent, m, agent.home)
  if (record === undefined) {
    return yield* fail(
      `the ${SKILL_NAME} skill is not installed in ${skillLocation(agent.home).root}`,
      `Run: ${agent.reinstall}`
    )
  }
  const skill = yield* bundledSkill(agent)
  const missing = yield* missingDirectories(agent, [record.root, NodePath.dirname(record.path)])
  const state = yield* inspectIfPresent(missing, record.path, agent.reinstall)
  yield* checkRecordedFile(agent, record, state, skill.sha256)
  return record
})

/** What is on disk, as doctor says it, compared with the record when there is one. */
const describeState = (state: FileState, record: SkillRecord | undefined) => {
  switch (state._tag) {
    case "Regular":
      return `SHA-256 ${short(state.sha256)}…${record === undefined ? "" : state.sha256 === record.sha256 ? " (as blctx wrote it)" : " (changed since blctx wrote it)"}`
    case "Absent":
      return "absent"
    case "Link":
      return "a symbolic link"
    case "Hardlinked":
      return `a file with ${state.nlink} hard links`
    case "NotFile":
      return `a ${state.kind}`
  }
}

/** Doctor: the file on disk at this home's path and what blctx records, whatever the state. */
const describeSkillFile = (agent: SkillAgent) =>
  Effect.gen(function* () {
    const path = skillLocation(agent.home).path
    const manifest = yield* Effect.flatMap(manifestOf(agent), (m) => m.read).pipe(
      Effect.orElseSucceed(() => Option.none<Manifest>())
    )
    const records = Option.match(manifest, { onNone: () => [], onSome: agent.recordsOf })
    const record = records.find((r) => r.home === agent.home)
    const state = yield* inspectFile(path, agent.reinstall).pipe(
      Effect.orElseSucceed((): FileState => ({ _tag: "Absent" }))
    )
    const recorded =
      records.length === 0
        ? "blctx records no skill file"
        : `blctx records ${records.map((r) => `${r.path} (blctx ${r.version})`).join(", ")}`
    return `${path} is ${describeState(state, record)}; ${recorded}`
  })

/**
 * Removes one recorded file when it still holds what blctx wrote (or this build's skill: an update
 * interrupted before it was recorded left that, and it is blctx's too). The recorded root, not
 * today's home; links on the way are never followed.
 */
const removeRecordedFile = (
  agent: SkillAgent,
  record: SkillRecord,
  current: Option.Option<{ readonly sha256: string }>
) =>
  Effect.gen(function* () {
    const next = agent.uninstallCommand
    const missing = yield* missingDirectories(agent, [record.root, NodePath.dirname(record.path)], next)
    const state = yield* inspectIfPresent(missing, record.path, next)
    const refused = refusal(agent, record.path, state, next)
    if (Option.isSome(refused)) return yield* refused.value
    if (state._tag !== "Regular") return "gone" as const
    const ours = state.sha256 === record.sha256 || Option.exists(current, (c) => c.sha256 === state.sha256)
    if (!ours) {
      return yield* fail(
        `${record.path} was changed after blctx wrote it; it was kept`,
        `If you no longer need it: rm ${record.path}`
      )
    }
    yield* removeVerified(record.path, state.entry).pipe(Effect.mapError(fromFs(next)))
    return "removed" as const
  })

/** Folders blctx made go too, once empty; anything else put there keeps them. Returns those removed. */
const removeCreatedFolders = (m: Manifest, record: SkillRecord) =>
  Effect.gen(function* () {
    const fs = yield* SafeFs
    const removed: Array<string> = []
    for (const created of [NodePath.dirname(record.path), record.root]) {
      if (!m.created_directories.includes(created)) continue
      const entry = yield* fs.lstat(created).pipe(Effect.orElseSucceed(() => Option.none()))
      if (Option.isNone(entry) || entry.value.kind !== "directory") continue
      if (yield* fs.removeEmptyDirectory(created).pipe(Effect.orElseSucceed(() => false))) removed.push(created)
    }
    return removed
  })

/** What became of each recorded file, and of the folders blctx made for them. */
interface Removal {
  readonly kept: Array<SkillRecord>
  readonly removed: Array<string>
  readonly gone: Array<string>
  readonly removedDirs: Array<string>
  readonly problems: Array<StepFailure>
}

const removeRecords = (agent: SkillAgent, m: Manifest, records: ReadonlyArray<SkillRecord>) =>
  Effect.gen(function* () {
    const current = yield* bundledSkill(agent).pipe(Effect.option)
    const removal: Removal = { kept: [], removed: [], gone: [], removedDirs: [], problems: [] }
    for (const record of records) {
      const outcome = yield* Effect.either(removeRecordedFile(agent, record, current))
      if (outcome._tag === "Left") {
        removal.kept.push(record)
        removal.problems.push(outcome.left)
        continue
      }
      ;(outcome.right === "removed" ? removal.removed : removal.gone).push(record.path)
      removal.removedDirs.push(...(yield* removeCreatedFolders(m, record)))
    }
    return removal
  })

/** The removal's report: its problems together as one failure, else what was removed. */
const removalOutcome = ({ removed, gone, problems }: Removal) => {
  if (problems.length > 0) {
    return fail(
      problems.map((p) => p.detail).join("; "),
      problems.map((p) => p.remediation).join("; "),
      problems[0]?.errorTag
    )
  }
  if (removed.length === 0) return Effect.succeed({ detail: `nothing to remove: already gone (${gone.join(", ")})` })
  const alreadyGone = gone.length > 0 ? `; already gone: ${gone.join(", ")}` : ""
  return Effect.succeed({ detail: `removed ${removed.join(", ")}${alreadyGone}` })
}

const uninstallSkill = Effect.fn("SkillFile.uninstall")(function* (agent: SkillAgent) {
  const manifest = yield* Effect.flatMap(manifestOf(agent), (m) => m.read)
  if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no skill" }
  const m = manifest.value
  const records = agent.recordsOf(m)
  if (records.length === 0) return { detail: "nothing to remove: blctx installed no skill" }
  const removal = yield* removeRecords(agent, m, records)
  const created = m.created_directories.filter((d) => !removal.removedDirs.includes(d))
  if (removal.kept.length !== records.length || created.length !== m.created_directories.length) {
    yield* writeManifest(agent, m, removal.kept, created)
  }
  return yield* removalOutcome(removal)
})

/**
 * The ownership rules for one agent's copy of the skill, for its step to compose: each effect is
 * a named function above, given the services this was built with, so the step needs nothing.
 */
export const makeSkillFile = (agent: SkillAgent) =>
  Effect.map(Effect.context<SkillFileNeeds>(), (context) => ({
    target: skillLocation(agent.home),
    install: () => Effect.provide(installSkill(agent), context),
    verifyFile: () => Effect.provide(verifySkillFile(agent), context),
    describeFile: Effect.provide(describeSkillFile(agent), context),
    uninstall: () => Effect.provide(uninstallSkill(agent), context)
  }))
