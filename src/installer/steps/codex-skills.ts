import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { DateTime, Effect, Option } from "effect"
import { CodexAppServer, type CodexSkill } from "../../codex/codex-app-server.js"
import { CODEX_INSTALL_COMMAND, type CodexError, codexConfigFile } from "../../codex/codex-cli.js"
import { checkOwnership } from "../../fs/ownership.js"
import { type FsError, SafeFs } from "../../fs/safe-fs.js"
import { type CodexSkillInstallation, Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { VERSION } from "../../version.js"
import { ProgramPaths } from "../program-paths.js"
import { fail, type Step, type StepFailure } from "../step.js"

/** The skill's name: its folder in a skills root and the `name:` of its front matter. */
export const CODEX_SKILL_NAME = "base-layer-context"

const REINSTALL = "blctx install codex --step codex_skills"
const STATUS = "blctx status --step codex_skills"
const UNINSTALL = "blctx uninstall codex --step codex_skills"

/**
 * Folders blctx creates are private; the file is 0600 too: only this user's Codex reads it, and
 * blctx creates nothing wider than private (its umask is 077). The content is no secret, but
 * nobody else needs it either.
 */
const DIRECTORY_MODE = 0o700
const FILE_MODE = 0o600

/** A skill file larger than this is not blctx's (the bundled one is a few KiB) and is not read. */
const MAX_SKILL_BYTES = 1024 * 1024

/** Where the skill lives in a Codex home: the skills root Codex reads, the skill's folder, its file. */
export const skillLocation = (codexHome: string) => {
  const root = NodePath.join(codexHome, "skills")
  const dir = NodePath.join(root, CODEX_SKILL_NAME)
  return { root, dir, path: NodePath.join(dir, "SKILL.md") }
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")
const short = (hash: string) => hash.slice(0, 12)

/** What is at the skill file's path, read without following a link. */
type FileState =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Link" }
  | { readonly _tag: "NotFile"; readonly kind: string }
  | { readonly _tag: "Hardlinked"; readonly nlink: number }
  | { readonly _tag: "Regular"; readonly sha256: string }

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

/**
 * Installs blctx's bundled skill (`skills/base-layer-context/SKILL.md` in the package) as
 * `$CODEX_HOME/skills/base-layer-context/SKILL.md`, where Codex discovers it, so agents know when
 * and how to use the base-layer-context MCP tools. Verification asks the real Codex
 * (`codex app-server` `skills/list`): the skill must be listed, enabled, at that path, once.
 *
 * Ownership is the manifest's `codex_skills` record (Codex home, root, path, blctx version,
 * SHA-256), written before the file (with the folders about to be created), so an interrupted
 * install is retried as blctx's own. The file is blctx's only while it hashes to the record: an
 * unchanged one is upgraded, anything else (edited, not recorded, a link, a hard link, a folder)
 * is left untouched and reported. blctx never edits config.toml: a skill a person disabled there
 * stays disabled.
 */
export const codexSkillsStep = Effect.gen(function* () {
  const codex = yield* CodexAppServer
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const fs = yield* SafeFs

  const codexHome = paths.codexHome
  const target = skillLocation(codexHome)
  const configFile = codexConfigFile(codexHome)

  const fromFs =
    (next = REINSTALL) =>
    (e: FsError) =>
      fail(`${e.op} ${e.path} failed: ${e.message}`, `Check the permissions of ${e.path}, then run: ${next}`)

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

  const readManifest = manifests
    .read()
    .pipe(
      Effect.mapError((e) =>
        fail(`manifest ${manifests.path} is unreadable (${e._tag})`, "Check it: blctx status --step data_directory")
      )
    )

  const readActive = Effect.gen(function* () {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) {
      return yield* fail(`blctx is not installed: no manifest at ${manifests.path}`, "Run: blctx install codex")
    }
    if (manifest.value.state !== "active") {
      return yield* fail(
        `installation ${manifest.value.installation_id} is inactive (uninstalled)`,
        "Run: blctx install codex"
      )
    }
    return manifest.value
  })

  /** The skill this build ships, read from the package. */
  const bundled = fs.readText(programs.skill).pipe(
    Effect.map((text) => ({ text, sha256: sha256(text) })),
    Effect.mapError((e) =>
      fail(
        `the bundled skill ${programs.skill} could not be read: ${e.message}`,
        `Reinstall blctx (its package ships skills/${CODEX_SKILL_NAME}/SKILL.md), then run: ${REINSTALL}`
      )
    )
  )

  const recordOf = (m: Manifest, home: string) => (m.codex_skills ?? []).find((r) => r.codex_home === home)

  /** Writes the skill records and the created folders into the manifest. */
  const writeManifest = (
    m: Manifest,
    records: ReadonlyArray<CodexSkillInstallation>,
    created: ReadonlyArray<string> = m.created_directories
  ) =>
    Effect.gen(function* () {
      const { codex_skills: _previous, ...rest } = m
      const updated_at = DateTime.formatIso(yield* DateTime.now)
      yield* manifests
        .write(
          new Manifest({
            ...rest,
            created_directories: created,
            ...(records.length > 0 ? { codex_skills: records } : {}),
            updated_at
          })
        )
        .pipe(
          Effect.mapError((e) =>
            fail(`could not record the skill in ${manifests.path}: ${e.message}`, "Check the state directory.")
          )
        )
    })

  const withRecord = (m: Manifest, record: CodexSkillInstallation) => [
    ...(m.codex_skills ?? []).filter((r) => r.codex_home !== record.codex_home),
    record
  ]

  const linkRefused = (path: string, next = REINSTALL) =>
    fail(
      `${path} is a symbolic link; blctx does not write through links into Codex's skills, so it was left untouched`,
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
        return { _tag: "Regular", sha256: `larger than ${MAX_SKILL_BYTES} bytes` } as FileState
      const text = yield* fs.readText(path).pipe(Effect.mapError(fromFs(next)))
      return { _tag: "Regular", sha256: sha256(text) } as FileState
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

  const judge = (state: FileState, record: CodexSkillInstallation | undefined, bundledSha: string): Judgement => {
    const refused = refusal(target.path, state)
    if (Option.isSome(refused)) return { _tag: "Refused", failure: refused.value }
    if (state._tag !== "Regular") return { _tag: "Absent" }
    if (record === undefined) return { _tag: "Foreign" }
    // The bundled content with a record: current, or an update interrupted before it was recorded.
    if (state.sha256 === bundledSha) return { _tag: "Current" }
    if (state.sha256 === record.sha256) return { _tag: "Outdated" }
    return { _tag: "Edited", sha256: state.sha256 }
  }

  const edited = (path: string, now: string, record: CodexSkillInstallation) =>
    fail(
      `${path} was changed after blctx wrote it (SHA-256 ${short(now)}…, blctx wrote ${short(record.sha256)}…); it was left untouched`,
      `To let blctx write it again, remove it (rm ${path}), then run: ${REINSTALL}. To keep your version, leave it: blctx will not change it.`
    )

  const foreign = (path: string, what: string) =>
    fail(
      `${path} already exists and blctx did not ${what} it; it was left untouched`,
      `If it is an old copy you no longer need, remove it, then run: ${REINSTALL}`
    )

  /**
   * Another copy under the standard user roots would make Codex discover the skill twice. The
   * Codex default home counts only when it is not the target.
   */
  const otherCopies = (m: Manifest) =>
    Effect.gen(function* () {
      const roots = [NodePath.join(paths.home, ".agents", "skills")]
      const defaultHome = NodePath.join(paths.home, ".codex")
      if (NodePath.resolve(codexHome) !== defaultHome) roots.push(skillLocation(defaultHome).root)
      for (const root of roots) {
        const copy = NodePath.join(root, CODEX_SKILL_NAME)
        if (Option.isNone(yield* fs.lstat(copy).pipe(Effect.mapError(fromFs())))) continue
        const ours = (m.codex_skills ?? []).find((r) => NodePath.dirname(r.path) === copy)
        return yield* fail(
          `another skill named ${CODEX_SKILL_NAME} is at ${copy}: with ${target.path} Codex would discover it twice, so nothing was written`,
          ours === undefined
            ? `If it is an old copy, remove it (rm -r ${copy}), then run: ${REINSTALL}`
            : `It is the copy blctx installed for CODEX_HOME ${ours.codex_home}: run blctx uninstall codex --step codex_skills, then: ${REINSTALL}`
        )
      }
    })

  const ownership = (path: string) =>
    checkOwnership(path).pipe(
      Effect.provideService(SafeFs, fs),
      Effect.mapError((e) =>
        e._tag === "OwnershipProblem"
          ? fail(
              e.detail,
              `Use a Codex home only you can change (fix the ownership or permissions named), then run: ${REINSTALL}`
            )
          : fromFs()(e)
      )
    )

  const install = Effect.fn("CodexSkills.install")(function* () {
    const m = yield* readActive
    const skill = yield* bundled
    if (Option.isNone(yield* fs.lstat(codexHome).pipe(Effect.mapError(fromFs())))) {
      return yield* fail(
        `the Codex home ${codexHome} does not exist`,
        `Start Codex once (or create the folder: mkdir -p ${codexHome}), then run: ${REINSTALL}`
      )
    }
    yield* otherCopies(m)
    const missing = yield* missingDirectories([target.root, target.dir])
    yield* ownership(target.path)
    const record = recordOf(m, codexHome)
    if (!missing.includes(target.dir) && record === undefined && !m.created_directories.includes(target.dir)) {
      // A folder of that name blctx neither created nor recorded: someone else's skill.
      const file = yield* inspectFile(target.path)
      return yield* foreign(
        file._tag === "Absent" ? target.dir : target.path,
        file._tag === "Absent" ? "create" : "write"
      )
    }
    const state: FileState = missing.includes(target.dir) ? { _tag: "Absent" } : yield* inspectFile(target.path)
    const desired: CodexSkillInstallation = {
      codex_home: codexHome,
      root: target.root,
      path: target.path,
      version: VERSION,
      sha256: skill.sha256
    }
    const judged = judge(state, record, skill.sha256)
    const write = fs.writeAtomic(target.path, skill.text, FILE_MODE).pipe(Effect.mapError(fromFs()))
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
        return { detail: `installed the ${CODEX_SKILL_NAME} skill at ${target.path} (blctx ${VERSION})` }
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

  /** Codex's own view: listed once, at the recorded path, enabled. */
  const askCodex = (record: CodexSkillInstallation) =>
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
    const m = yield* readActive
    const record = recordOf(m, codexHome)
    if (record === undefined) {
      return yield* fail(`the ${CODEX_SKILL_NAME} skill is not installed in ${target.root}`, `Run: ${REINSTALL}`)
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
    const manifest = yield* readManifest.pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
    const records = Option.match(manifest, { onNone: () => [], onSome: (m) => m.codex_skills ?? [] })
    const record = records.find((r) => r.codex_home === codexHome)
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
    return {
      detail: `Codex (CODEX_HOME ${codexHome}) lists ${listed}${unloadable}; ${target.path} is ${onDisk}; ${recorded}`
    }
  })

  const uninstall = Effect.fn("CodexSkills.uninstall")(function* () {
    const manifest = yield* readManifest
    if (Option.isNone(manifest)) return { detail: "nothing to remove: no manifest, so blctx installed no skill" }
    const m = manifest.value
    const records = m.codex_skills ?? []
    if (records.length === 0) return { detail: "nothing to remove: blctx installed no skill" }
    // An update interrupted before it was recorded left this build's skill: that is blctx's too.
    const current = yield* bundled.pipe(Effect.option)
    const kept: Array<CodexSkillInstallation> = []
    const removed: Array<string> = []
    const gone: Array<string> = []
    const removedDirs: Array<string> = []
    const problems: Array<StepFailure> = []
    for (const record of records) {
      // The recorded root, not today's CODEX_HOME; links on the way are never followed.
      const dir = NodePath.dirname(record.path)
      const outcome = yield* Effect.either(
        Effect.gen(function* () {
          const missing = yield* missingDirectories([record.root, dir], UNINSTALL)
          const state: FileState = missing.length > 0 ? { _tag: "Absent" } : yield* inspectFile(record.path, UNINSTALL)
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
          yield* fs.removeFile(record.path).pipe(Effect.mapError(fromFs(UNINSTALL)))
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

  const step: Step = {
    id: "codex_skills",
    title: "Codex skills",
    requires: ["data_directory"],
    install: () => install(),
    verify: () => verify(),
    diagnose: () => diagnose(),
    uninstall: () => uninstall()
  }
  return step
})
