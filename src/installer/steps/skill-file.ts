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

/** The ownership rules for one agent's copy of the skill, for its step to compose. */
export const makeSkillFile = (agent: SkillAgent) =>
  Effect.gen(function* () {
    const manifests = yield* ManifestStore
    const programs = yield* ProgramPaths
    const fs = yield* SafeFs

    const { home, reinstall: REINSTALL, uninstallCommand: UNINSTALL } = agent
    const target = skillLocation(home)

    const fromFs =
      (next = REINSTALL) =>
      (e: FsError | PathSwapped) =>
        e._tag === "PathSwapped"
          ? fail(e.message, `Find out what replaced ${e.path}, then run: ${next}`)
          : fail(`${e.op} ${e.path} failed: ${e.message}`, `Check the permissions of ${e.path}, then run: ${next}`)

    const { read: readManifest, readActive } = stepManifest(manifests, agent.installCommand)

    /** The skill this build ships, read from the package. */
    const bundled = fs.readText(programs.skill).pipe(
      Effect.map((text) => ({ text, sha256: sha256(text) })),
      Effect.mapError((e) =>
        fail(
          `the bundled skill ${programs.skill} could not be read: ${e.message}`,
          `Reinstall blctx (its package ships skills/${SKILL_NAME}/SKILL.md), then run: ${REINSTALL}`
        )
      )
    )

    const recordOf = (m: Manifest, h: string) => agent.recordsOf(m).find((r) => r.home === h)

    /** Writes the skill records and the created folders into the manifest. */
    const writeManifest = (
      m: Manifest,
      records: ReadonlyArray<SkillRecord>,
      created: ReadonlyArray<string> = m.created_directories
    ) =>
      Effect.gen(function* () {
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

    const withRecord = (m: Manifest, record: SkillRecord) => [
      ...agent.recordsOf(m).filter((r) => r.home !== record.home),
      record
    ]

    const linkRefused = (path: string, next = REINSTALL) =>
      fail(
        `${path} is a symbolic link; blctx does not write through links into ${agent.agent}'s skills, so it was left untouched`,
        `Replace ${path} with a real ${path === target.path ? "file" : "directory"} (or remove it), then run: ${next}`
      )

    /**
     * The skills root and the skill's folder, outermost first: the missing ones (blctx would create
     * them), or a refusal for a link or something other than a folder.
     */
    const missingDirectories = (dirs: ReadonlyArray<string>, next = REINSTALL) =>
      Effect.gen(function* () {
        const missing: Array<string> = []
        for (const dir of dirs) {
          if (missing.length > 0) {
            missing.push(dir)
            continue
          }
          const entry = yield* fs.lstat(dir).pipe(Effect.mapError(fromFs(next)))
          if (Option.isNone(entry)) missing.push(dir)
          else if (entry.value.kind === "symlink") return yield* linkRefused(dir, next)
          else if (entry.value.kind !== "directory") {
            return yield* fail(
              `${dir} exists and is not a directory (it is a ${entry.value.kind}); it was left untouched`,
              `Move ${dir} aside, then run: ${next}`
            )
          }
        }
        return missing
      })

    const inspectFile = (path: string, next = REINSTALL) =>
      Effect.gen(function* () {
        const entry = yield* fs.lstat(path).pipe(Effect.mapError(fromFs(next)))
        if (Option.isNone(entry)) return { _tag: "Absent" } as FileState
        const e = entry.value
        if (e.kind === "symlink") return { _tag: "Link" } as FileState
        if (e.kind !== "file") return { _tag: "NotFile", kind: e.kind } as FileState
        if (e.nlink > 1) return { _tag: "Hardlinked", nlink: e.nlink } as FileState
        if (e.size > MAX_SKILL_BYTES)
          return { _tag: "Regular", sha256: `larger than ${MAX_SKILL_BYTES} bytes`, entry: e } as FileState
        // Hashed through a descriptor of the file just checked, never by its path again.
        const text = yield* readVerified(path, e).pipe(Effect.provideService(SafeFs, fs), Effect.mapError(fromFs(next)))
        return { _tag: "Regular", sha256: sha256(text), entry: e } as FileState
      })

    const refusal = (path: string, state: FileState, next = REINSTALL): Option.Option<StepFailure> => {
      switch (state._tag) {
        case "Link":
          return Option.some(linkRefused(path, next))
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

    const judge = (state: FileState, record: SkillRecord | undefined, bundledSha: string): Judgement => {
      const refused = refusal(target.path, state)
      if (Option.isSome(refused)) return { _tag: "Refused", failure: refused.value }
      if (state._tag !== "Regular") return { _tag: "Absent" }
      if (record === undefined) return { _tag: "Foreign" }
      // The bundled content with a record: current, or an update interrupted before it was recorded.
      if (state.sha256 === bundledSha) return { _tag: "Current" }
      if (state.sha256 === record.sha256) return { _tag: "Outdated" }
      return { _tag: "Edited", sha256: state.sha256 }
    }

    const edited = (path: string, now: string, record: SkillRecord) =>
      fail(
        `${path} was changed after blctx wrote it (SHA-256 ${short(now)}…, blctx wrote ${short(record.sha256)}…); it was left untouched`,
        `To let blctx write it again, remove it (rm ${path}), then run: ${REINSTALL}. To keep your version, leave it: blctx will not change it.`
      )

    const foreign = (path: string, what: string) =>
      fail(
        `${path} already exists and blctx did not ${what} it; it was left untouched`,
        `If it is an old copy you no longer need, remove it, then run: ${REINSTALL}`
      )

    /** Another copy under the agent's other user roots would make it discover the skill twice. */
    const otherCopies = (m: Manifest) =>
      Effect.gen(function* () {
        for (const root of agent.otherRoots) {
          const copy = NodePath.join(root, SKILL_NAME)
          if (Option.isNone(yield* fs.lstat(copy).pipe(Effect.mapError(fromFs())))) continue
          const ours = agent.recordsOf(m).find((r) => NodePath.dirname(r.path) === copy)
          return yield* fail(
            `another skill named ${SKILL_NAME} is at ${copy}: with ${target.path} ${agent.agent} would discover it twice, so nothing was written`,
            ours === undefined
              ? `If it is an old copy, remove it (rm -r ${copy}), then run: ${REINSTALL}`
              : `It is the copy blctx installed for ${agent.homeVariable} ${ours.home}: run ${UNINSTALL}, then: ${REINSTALL}`
          )
        }
      })

    const ownership = (path: string) => checkAgentHomePath(fs, path, agent.agent, REINSTALL)

    const install = Effect.fn("SkillFile.install")(function* () {
      const m = yield* readActive
      const skill = yield* bundled
      if (Option.isNone(yield* fs.lstat(home).pipe(Effect.mapError(fromFs())))) {
        const missing = agent.missingHome(home)
        return yield* fail(missing.detail, missing.remediation)
      }
      yield* otherCopies(m)
      const missing = yield* missingDirectories([target.root, target.dir])
      yield* ownership(target.path)
      const record = recordOf(m, home)
      if (!missing.includes(target.dir) && record === undefined && !m.created_directories.includes(target.dir)) {
        // A folder of that name blctx neither created nor recorded: someone else's skill.
        const file = yield* inspectFile(target.path)
        return yield* foreign(
          file._tag === "Absent" ? target.dir : target.path,
          file._tag === "Absent" ? "create" : "write"
        )
      }
      const state: FileState = missing.includes(target.dir) ? { _tag: "Absent" } : yield* inspectFile(target.path)
      const desired: SkillRecord = {
        home,
        root: target.root,
        path: target.path,
        version: VERSION,
        sha256: skill.sha256
      }
      const judged = judge(state, record, skill.sha256)
      // Only over what was judged: nothing when absent, else the very file that was hashed.
      const write = writeReplacing(
        target.path,
        skill.text,
        FILE_MODE,
        state._tag === "Regular" ? Option.some(state.entry) : Option.none()
      ).pipe(Effect.provideService(SafeFs, fs), Effect.mapError(fromFs()))
      switch (judged._tag) {
        case "Refused":
          return yield* judged.failure
        case "Foreign":
          return yield* foreign(target.path, "write")
        case "Edited":
          return yield* edited(target.path, judged.sha256, record ?? desired)
        case "Absent": {
          // Recorded first, with the folders about to be made: if anything stops us now, a rerun
          // still treats the file and folders as blctx's.
          const created = [...new Set([...m.created_directories, ...missing])]
          yield* writeManifest(m, withRecord(m, desired), created)
          for (const dir of missing) yield* fs.makeDirectory(dir, DIRECTORY_MODE).pipe(Effect.mapError(fromFs()))
          yield* write
          return { detail: `installed the ${SKILL_NAME} skill at ${target.path} (blctx ${VERSION})` }
        }
        case "Outdated":
          // Written, then recorded: until then the file is blctx's by either hash.
          yield* write
          yield* writeManifest(m, withRecord(m, desired))
          return {
            detail: `updated ${target.path} to the skill blctx ${VERSION} ships (it held the one blctx ${record?.version} wrote)`
          }
        case "Current":
          if (record?.sha256 !== desired.sha256 || record.version !== desired.version || record.root !== desired.root) {
            yield* writeManifest(m, withRecord(m, desired))
          }
          return { detail: `${target.path} already holds blctx ${VERSION}'s skill, left as is` }
      }
    })

    /**
     * The file as recorded: present, a plain file, holding what blctx wrote, and that is what this
     * build ships. Returns the record, for the agent's own check.
     */
    const verifyFile = Effect.fn("SkillFile.verify")(function* () {
      const m = yield* readActive
      const record = recordOf(m, home)
      if (record === undefined) {
        return yield* fail(`the ${SKILL_NAME} skill is not installed in ${target.root}`, `Run: ${REINSTALL}`)
      }
      const skill = yield* bundled
      const missing = yield* missingDirectories([record.root, NodePath.dirname(record.path)])
      const state: FileState = missing.length > 0 ? { _tag: "Absent" } : yield* inspectFile(record.path)
      const refused = refusal(record.path, state)
      if (Option.isSome(refused)) return yield* refused.value
      if (state._tag !== "Regular") {
        return yield* fail(`${record.path} is missing (it was removed after install)`, `Run: ${REINSTALL}`)
      }
      if (state.sha256 !== record.sha256) {
        if (state.sha256 === skill.sha256) {
          return yield* fail(
            `${record.path} holds blctx ${VERSION}'s skill but blctx's record is of blctx ${record.version}'s (an update was interrupted)`,
            `Run: ${REINSTALL}`
          )
        }
        return yield* edited(record.path, state.sha256, record)
      }
      if (record.sha256 !== skill.sha256) {
        return yield* fail(
          `${record.path} holds the skill blctx ${record.version} wrote, not the one this build ships (blctx ${VERSION})`,
          `Run: ${REINSTALL}`
        )
      }
      return record
    })

    /** Doctor: the file on disk at this home's path and what blctx records, whatever the state. */
    const describeFile = Effect.gen(function* () {
      const manifest = yield* readManifest.pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
      const records = Option.match(manifest, { onNone: () => [], onSome: agent.recordsOf })
      const record = records.find((r) => r.home === home)
      const state = yield* inspectFile(target.path).pipe(Effect.orElseSucceed((): FileState => ({ _tag: "Absent" })))
      const onDisk =
        state._tag === "Regular"
          ? `SHA-256 ${short(state.sha256)}…${record === undefined ? "" : state.sha256 === record.sha256 ? " (as blctx wrote it)" : " (changed since blctx wrote it)"}`
          : state._tag === "Absent"
            ? "absent"
            : state._tag === "Link"
              ? "a symbolic link"
              : state._tag === "Hardlinked"
                ? `a file with ${state.nlink} hard links`
                : `a ${state.kind}`
      const recorded =
        records.length === 0
          ? "blctx records no skill file"
          : `blctx records ${records.map((r) => `${r.path} (blctx ${r.version})`).join(", ")}`
      return `${target.path} is ${onDisk}; ${recorded}`
    })

    const uninstall = Effect.fn("SkillFile.uninstall")(function* () {
      const manifest = yield* readManifest
      if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no skill" }
      const m = manifest.value
      const records = agent.recordsOf(m)
      if (records.length === 0) return { detail: "nothing to remove: blctx installed no skill" }
      // An update interrupted before it was recorded left this build's skill: that is blctx's too.
      const current = yield* bundled.pipe(Effect.option)
      const kept: Array<SkillRecord> = []
      const removed: Array<string> = []
      const gone: Array<string> = []
      const removedDirs: Array<string> = []
      const problems: Array<StepFailure> = []
      for (const record of records) {
        // The recorded root, not today's home; links on the way are never followed.
        const dir = NodePath.dirname(record.path)
        const outcome = yield* Effect.either(
          Effect.gen(function* () {
            const missing = yield* missingDirectories([record.root, dir], UNINSTALL)
            const state: FileState =
              missing.length > 0 ? { _tag: "Absent" } : yield* inspectFile(record.path, UNINSTALL)
            const refused = refusal(record.path, state, UNINSTALL)
            if (Option.isSome(refused)) return yield* refused.value
            if (state._tag !== "Regular") return "gone" as const
            const ours = state.sha256 === record.sha256 || Option.exists(current, (c) => c.sha256 === state.sha256)
            if (!ours) {
              return yield* fail(
                `${record.path} was changed after blctx wrote it; it was kept`,
                `If you no longer need it: rm ${record.path}`
              )
            }
            yield* removeVerified(record.path, state.entry).pipe(
              Effect.provideService(SafeFs, fs),
              Effect.mapError(fromFs(UNINSTALL))
            )
            return "removed" as const
          })
        )
        if (outcome._tag === "Left") {
          kept.push(record)
          problems.push(outcome.left)
          continue
        }
        ;(outcome.right === "removed" ? removed : gone).push(record.path)
        // Folders blctx made go too, once empty; anything else put there keeps them.
        for (const created of [dir, record.root]) {
          if (!m.created_directories.includes(created)) continue
          const entry = yield* fs.lstat(created).pipe(Effect.orElseSucceed(() => Option.none()))
          if (Option.isNone(entry) || entry.value.kind !== "directory") continue
          if (yield* fs.removeEmptyDirectory(created).pipe(Effect.orElseSucceed(() => false))) removedDirs.push(created)
        }
      }
      const created = m.created_directories.filter((d) => !removedDirs.includes(d))
      if (kept.length !== records.length || created.length !== m.created_directories.length) {
        yield* writeManifest(m, kept, created)
      }
      if (problems.length > 0) {
        return yield* fail(
          problems.map((p) => p.detail).join("; "),
          problems.map((p) => p.remediation).join("; "),
          problems[0]?.errorTag
        )
      }
      if (removed.length === 0) return { detail: `nothing to remove: already gone (${gone.join(", ")})` }
      const alreadyGone = gone.length > 0 ? `; already gone: ${gone.join(", ")}` : ""
      return { detail: `removed ${removed.join(", ")}${alreadyGone}` }
    })

    return { target, readManifest, fromFs, install, verifyFile, describeFile, uninstall } as const
  })
