import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { type ConfigError, ConfigProvider, Effect, Either, Layer } from "effect"
import { CodexAppServerLive } from "../../../layers/codex-app-server-live.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { makeFakeCodexAppServer } from "../../../testing/fake-codex-app-server.js"
import type { CodexAppServer } from "../../codex/codex-app-server.js"
import { FsError, SafeFs } from "../../fs/safe-fs.js"
import {
  extraLinkSwap,
  hardLinkSwap,
  outsideFile,
  swappingSafeFs,
  symlinkSwap
} from "../../fs/swapping-safe-fs.test-support.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { VERSION } from "../../version.js"
import { AGENTS } from "../agents/agents.js"
import type { Step, StepFailure } from "../step.js"
import { SKILL_NAME as CODEX_SKILL_NAME, skillLocation } from "./skill-file.js"
import { skillsStep } from "./skills-step.js"

const codexSkillsStep = skillsStep(AGENTS.codex)

import { diagnoseOf, pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()

/** The skill the package ships. */
const PACKAGED = NodePath.resolve(
  NodePath.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "skills",
  CODEX_SKILL_NAME,
  "SKILL.md"
)

/** The app server the step asks: the fake, or the real Codex (whose layer reads PATH). */
type Fake = { readonly layer: Layer.Layer<CodexAppServer, ConfigError.ConfigError> }

interface Options {
  /** The bundled skill's path (default: the packaged one). */
  readonly skill?: string
  /** CODEX_HOME (default `<home>/codex`, created). */
  readonly codexHome?: string
  /** A SafeFs in place of the real one. */
  readonly safeFs?: Layer.Layer<SafeFs>
}

const codexHomeOf = (options: Options) => options.codexHome ?? pathInputs(fresh.home()).CODEX_HOME

const layerOf = (fake: Fake, options: Options) => {
  const codexHome = codexHomeOf(options)
  Fs.mkdirSync(codexHome, { recursive: true })
  return Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook: process.execPath,
      skill: options.skill ?? PACKAGED
    }),
    fake.layer
  ).pipe(
    Layer.provideMerge(Paths.layerFrom({ ...pathInputs(fresh.home()), CODEX_HOME: codexHome })),
    Layer.provideMerge(options.safeFs ?? NodeSafeFsLive)
  )
}

const withStep = <A, E>(fake: Fake, use: (step: Step) => Effect.Effect<A, E>, options: Options = {}) =>
  Effect.flatMap(codexSkillsStep, use).pipe(Effect.provide(layerOf(fake, options)))

const location = () => skillLocation(pathInputs(fresh.home()).CODEX_HOME)
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const modeOf = (path: string) => Fs.statSync(path).mode & 0o777
const failureOf = <A>(result: Either.Either<A, StepFailure | unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}
const failing = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.either(effect), failureOf)

/** A bundled skill of its own, so a test can ship one version and then another. */
const bundledCopy = (name: string, body: string) => {
  const path = NodePath.join(fresh.home(), "pkg", name, "SKILL.md")
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, `---\nname: ${CODEX_SKILL_NAME}\ndescription: Test skill.\n---\n\n${body}\n`)
  return path
}

const packaged = () => Fs.readFileSync(PACKAGED, "utf8")

describe("the bundled skill", () => {
  it("names itself base-layer-context, says when to use it, and stays short", () => {
    const text = packaged()
    const front = /^---\nname: (.*)\ndescription: (.*)\n---\n/.exec(text)
    expect(front?.[1]).toBe(CODEX_SKILL_NAME)
    expect(front?.[2]).toMatch(/what did we decide/)
    expect(text.split("\n").length).toBeLessThanOrEqual(120)
    for (const tool of ["search", "recent", "context", "context_status", "open_session", "log_update"]) {
      expect(text).toContain(`\`${tool}\``)
    }
  })
})

describe("codex_skills install", () => {
  it.effect("writes the skill privately, records it before writing, and Codex lists it enabled", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const installed = yield* step.install(runOf("install"))
        const { root, dir, path } = location()
        expect(installed.detail).toBe(`installed the ${CODEX_SKILL_NAME} skill at ${path} (blctx ${VERSION})`)
        expect(Fs.readFileSync(path, "utf8")).toBe(packaged())
        expect(modeOf(path)).toBe(0o600)
        expect([modeOf(root), modeOf(dir)]).toEqual([0o700, 0o700])
        const manifest = manifestJson()
        expect(manifest.codex_skills).toEqual([
          { codex_home: pathInputs(fresh.home()).CODEX_HOME, root, path, version: VERSION, sha256: sha(packaged()) }
        ])
        expect(manifest.created_directories).toEqual(expect.arrayContaining([root, dir]))
        // The file is not an owned file: data_directory's purge removes those whatever their content.
        expect(manifest.owned_files).not.toContain(path)

        const verified = yield* step.verify(runOf("status"))
        expect(verified.detail).toBe(`Codex lists ${CODEX_SKILL_NAME} at ${path}, enabled (blctx ${VERSION})`)
        expect(fake.state.calls).toEqual([`${pathInputs(fresh.home()).CODEX_HOME}: skills/list ${fresh.home()}`])
      })
    )
  })

  it.effect("an interrupted write is retried as blctx's own: the record comes first", () => {
    const fake = makeFakeCodexAppServer()
    const brokenWrites = Layer.effect(
      SafeFs,
      Effect.map(SafeFs, (real) =>
        SafeFs.of({
          ...real,
          // The skill's write fails; the manifest's goes through.
          writeAtomic: (path, content, mode) =>
            path.endsWith("SKILL.md")
              ? Effect.fail(new FsError({ op: "write", path, code: "ENOSPC", message: "no space" }))
              : real.writeAtomic(path, content, mode)
        })
      )
    ).pipe(Layer.provide(NodeSafeFsLive))
    return Effect.gen(function* () {
      const failed = yield* failing(withStep(fake, (step) => step.install(runOf("install")), { safeFs: brokenWrites }))
      expect(failed.detail).toContain("no space")
      expect(manifestJson().codex_skills).toHaveLength(1)
      expect(Fs.existsSync(location().dir)).toBe(true)
      expect(Fs.existsSync(location().path)).toBe(false)
      yield* withStep(fake, (step) =>
        Effect.gen(function* () {
          expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(
            `${location().path} is missing (it was removed after install)`
          )
          expect((yield* step.install(runOf("install"))).detail).toMatch(/^installed the /)
          yield* step.verify(runOf("status"))
        })
      )
    })
  })

  it.effect("a rerun leaves the unchanged skill and the manifest as they are", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const inode = Fs.statSync(location().path).ino
        const manifestBefore = Fs.readFileSync(fresh.paths().manifest, "utf8")
        const again = yield* step.install(runOf("install"))
        expect(again.detail).toBe(`${location().path} already holds blctx ${VERSION}'s skill, left as is`)
        expect(Fs.statSync(location().path).ino).toBe(inode)
        expect(Fs.readFileSync(fresh.paths().manifest, "utf8")).toBe(manifestBefore)
      })
    )
  })

  it.effect("upgrades an unchanged skill to the new bundled one, and status says when it is outdated", () => {
    const fake = makeFakeCodexAppServer()
    const v1 = bundledCopy("v1", "First version.")
    const v2 = bundledCopy("v2", "Second version.")
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")), { skill: v1 })
      yield* withStep(
        fake,
        (step) =>
          Effect.gen(function* () {
            const outdated = failureOf(yield* Effect.either(step.verify(runOf("status"))))
            expect(outdated.detail).toBe(
              `${location().path} holds the skill blctx ${VERSION} wrote, not the one this build ships (blctx ${VERSION})`
            )
            expect(outdated.remediation).toBe("Run: blctx install codex --step codex_skills")
            const upgraded = yield* step.install(runOf("install"))
            expect(upgraded.detail).toBe(
              `updated ${location().path} to the skill blctx ${VERSION} ships (it held the one blctx ${VERSION} wrote)`
            )
            expect(Fs.readFileSync(location().path, "utf8")).toBe(Fs.readFileSync(v2, "utf8"))
            expect(modeOf(location().path)).toBe(0o600)
            expect(manifestJson().codex_skills[0].sha256).toBe(sha(Fs.readFileSync(v2, "utf8")))
            yield* step.verify(runOf("status"))
          }),
        { skill: v2 }
      )
    })
  })

  it.effect("keeps a skill a person edited, in install, status and uninstall", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const mine = `${packaged()}\nMy own line.\n`
        Fs.writeFileSync(location().path, mine)

        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toMatch(
          new RegExp(
            `^${location().path} was changed after blctx wrote it \\(SHA-256 ${sha(mine).slice(0, 12)}…, blctx wrote ${sha(packaged()).slice(0, 12)}…\\); it was left untouched$`
          )
        )
        expect(refused.remediation).toContain(`remove it (rm ${location().path}), then run:`)
        expect(Fs.readFileSync(location().path, "utf8")).toBe(mine)
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(refused.detail)

        const kept = failureOf(yield* Effect.either(step.uninstall(runOf("uninstall"))))
        expect(kept.detail).toBe(`${location().path} was changed after blctx wrote it; it was kept`)
        expect(kept.remediation).toBe(`If you no longer need it: rm ${location().path}`)
        expect(Fs.readFileSync(location().path, "utf8")).toBe(mine)
        // Still recorded: a later install keeps refusing rather than calling it someone else's.
        expect(manifestJson().codex_skills).toHaveLength(1)
      })
    )
  })

  it.effect("refuses a skill file or folder of that name that blctx did not write, and changes nothing", () => {
    const fake = makeFakeCodexAppServer()
    const { dir, path } = location()
    Fs.mkdirSync(dir, { recursive: true })
    Fs.writeFileSync(path, packaged())
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(`${path} already exists and blctx did not write it; it was left untouched`)
        expect(manifestJson().codex_skills).toBeUndefined()
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(
          `the ${CODEX_SKILL_NAME} skill is not installed in ${location().root}`
        )
        expect((yield* step.uninstall(runOf("uninstall"))).detail).toBe("nothing to remove: blctx installed no skill")
        expect(Fs.readFileSync(path, "utf8")).toBe(packaged())

        Fs.rmSync(path)
        const folder = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(folder.detail).toBe(`${dir} already exists and blctx did not create it; it was left untouched`)
        expect(Fs.readdirSync(dir)).toEqual([])
      })
    )
  })

  it.effect("refuses a directory at the file's path", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        Fs.rmSync(location().path)
        Fs.mkdirSync(location().path)
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `${location().path} exists and is not a regular file (it is a directory); it was left untouched`
        )
      })
    )
  })

  it.effect("never writes through a symbolic link, at the file or at a folder on the way", () => {
    const fake = makeFakeCodexAppServer()
    const elsewhere = NodePath.join(fresh.home(), "elsewhere")
    Fs.mkdirSync(elsewhere)
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const { root, dir, path } = location()
        Fs.mkdirSync(root, { recursive: true })
        Fs.symlinkSync(elsewhere, dir)
        const viaFolder = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(viaFolder.detail).toBe(
          `${dir} is a symbolic link; blctx does not write through links into Codex's skills, so it was left untouched`
        )
        expect(Fs.readdirSync(elsewhere)).toEqual([])
        expect(manifestJson().codex_skills).toBeUndefined()

        Fs.rmSync(dir)
        yield* step.install(runOf("install"))
        const target = NodePath.join(elsewhere, "SKILL.md")
        Fs.writeFileSync(target, "theirs")
        Fs.rmSync(path)
        Fs.symlinkSync(target, path)
        const viaFile = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(viaFile.detail).toBe(
          `${path} is a symbolic link; blctx does not write through links into Codex's skills, so it was left untouched`
        )
        expect(viaFile.remediation).toBe(
          `Replace ${path} with a real file (or remove it), then run: blctx install codex --step codex_skills`
        )
        expect(failureOf(yield* Effect.either(step.uninstall(runOf("uninstall")))).detail).toBe(viaFile.detail)
        expect(Fs.readFileSync(target, "utf8")).toBe("theirs")
        expect(Fs.lstatSync(path).isSymbolicLink()).toBe(true)
      })
    )
  })

  it.effect("refuses a hard-linked skill file, which writing would change in two places", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const other = NodePath.join(fresh.home(), "other-name.md")
        Fs.linkSync(location().path, other)
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `${location().path} has 2 hard links, so writing it would change another file too; it was left untouched`
        )
        expect(failureOf(yield* Effect.either(step.uninstall(runOf("uninstall")))).detail).toBe(refused.detail)
        expect(Fs.existsSync(location().path)).toBe(true)
        expect(Fs.readFileSync(other, "utf8")).toBe(packaged())
      })
    )
  })

  it.effect("a second copy in a standard user root blocks installation instead of a duplicate", () => {
    const fake = makeFakeCodexAppServer()
    const agents = NodePath.join(fresh.home(), ".agents", "skills", CODEX_SKILL_NAME)
    const legacy = NodePath.join(fresh.home(), ".codex", "skills", CODEX_SKILL_NAME)
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        for (const copy of [agents, legacy]) {
          Fs.mkdirSync(copy, { recursive: true })
          Fs.writeFileSync(NodePath.join(copy, "SKILL.md"), packaged())
          const blocked = failureOf(yield* Effect.either(step.install(runOf("install"))))
          expect(blocked.detail).toBe(
            `another skill named ${CODEX_SKILL_NAME} is at ${copy}: with ${location().path} Codex would discover it twice, so nothing was written`
          )
          expect(blocked.remediation).toBe(
            `If it is an old copy, remove it (rm -r ${copy}), then run: blctx install codex --step codex_skills`
          )
          expect(Fs.existsSync(location().dir)).toBe(false)
          Fs.rmSync(copy, { recursive: true })
        }
        yield* step.install(runOf("install"))
        // Codex itself finding two (here under ~/.agents/skills) fails status too.
        Fs.mkdirSync(agents, { recursive: true })
        Fs.writeFileSync(NodePath.join(agents, "SKILL.md"), packaged())
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(
          `Codex discovers ${CODEX_SKILL_NAME} twice: at ${location().path} and at ${NodePath.join(agents, "SKILL.md")}`
        )
      })
    )
  })

  it.effect("~/.codex is no duplicate when it is the Codex home itself", () => {
    const fake = makeFakeCodexAppServer()
    const codexHome = NodePath.join(fresh.home(), ".codex")
    return withStep(
      fake,
      (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          yield* step.verify(runOf("status"))
          expect(Fs.existsSync(skillLocation(codexHome).path)).toBe(true)
        }),
      { codexHome }
    )
  })

  it.effect("a skill disabled in config.toml fails status, and install does not enable it", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        fake.state.disabled.add(location().path)
        const config = NodePath.join(pathInputs(fresh.home()).CODEX_HOME, "config.toml")
        const disabled = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(disabled.detail).toBe(
          `the ${CODEX_SKILL_NAME} skill at ${location().path} is disabled in ${config} [[skills.config]] (enabled = false); blctx leaves it disabled`
        )
        expect(disabled.remediation).toContain(`remove that [[skills.config]] entry for ${location().path}`)
        yield* step.install(runOf("install"))
        expect(Fs.existsSync(config)).toBe(false)
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(disabled.detail)
      })
    )
  })

  it.effect("a skill Codex does not list fails status with what Codex said about it", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const home = pathInputs(fresh.home()).CODEX_HOME
        fake.state.skills.set(home, { skills: [], errors: [{ path: location().path, message: "invalid YAML" }] })
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(
          `Codex does not list the skill at ${location().path}: invalid YAML`
        )
      })
    )
  })

  it.effect("without codex, status fails with the install command; the file is still written", () => {
    const fake = makeFakeCodexAppServer({ installed: false })
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        expect(Fs.existsSync(location().path)).toBe(true)
        const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(missing.detail).toBe(
          "the codex command was not found on PATH (/usr/bin:/bin); blctx asks Codex which skills it discovers"
        )
        expect(missing.remediation).toBe(
          "Install Codex: npm install -g @openai/codex (or put codex on PATH), then run: blctx status --step codex_skills"
        )
        expect(missing.errorTag).toBe("CodexNotFound")
        expect(failureOf(yield* Effect.either(diagnoseOf(step, runOf("doctor")))).errorTag).toBe("CodexNotFound")
      })
    )
  })

  it.effect("a missing Codex home is a clear failure and nothing is created", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const home = pathInputs(fresh.home()).CODEX_HOME
        Fs.rmSync(home, { recursive: true })
        const missing = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(missing.detail).toBe(`the Codex home ${home} does not exist`)
        expect(Fs.existsSync(home)).toBe(false)
      })
    )
  })

  it.effect("doctor names what Codex lists, the file on disk and blctx's record", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const home = pathInputs(fresh.home()).CODEX_HOME
        const { detail } = yield* diagnoseOf(step, runOf("doctor"))
        expect(detail).toBe(
          `Codex (CODEX_HOME ${home}) lists ${location().path} (user, enabled); ${location().path} is SHA-256 ${sha(packaged()).slice(0, 12)}… (as blctx wrote it); blctx records ${location().path} (blctx ${VERSION})`
        )
      })
    )
  })
})

describe("codex_skills uninstall", () => {
  it.effect("removes the recorded file and the folders blctx made, even after CODEX_HOME changed", () => {
    const fake = makeFakeCodexAppServer()
    const first = NodePath.join(fresh.home(), "first-codex")
    const second = NodePath.join(fresh.home(), "second-codex")
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")), { codexHome: first })
      const { root, dir, path } = skillLocation(first)
      const removed = yield* withStep(fake, (step) => step.uninstall(runOf("uninstall")), { codexHome: second })
      expect(removed.detail).toBe(`removed ${path}`)
      expect([Fs.existsSync(path), Fs.existsSync(dir), Fs.existsSync(root)]).toEqual([false, false, false])
      const manifest = manifestJson()
      expect(manifest.codex_skills).toBeUndefined()
      expect(manifest.created_directories).not.toContain(dir)
      expect(manifest.created_directories).not.toContain(root)
      expect(Fs.existsSync(first)).toBe(true)
    })
  })

  it.effect("keeps folders it did not make, and folders holding something else", () => {
    const fake = makeFakeCodexAppServer()
    const { root, dir } = location()
    Fs.mkdirSync(root, { recursive: true })
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        Fs.writeFileSync(NodePath.join(dir, "notes.md"), "mine")
        yield* step.uninstall(runOf("uninstall"))
        expect(Fs.readdirSync(dir)).toEqual(["notes.md"])
        expect(Fs.existsSync(root)).toBe(true)
        expect(manifestJson().created_directories).toContain(dir)
        expect(manifestJson().created_directories).not.toContain(root)
      })
    )
  })

  it.effect("a skill already removed is nothing to remove, and the record goes", () => {
    const fake = makeFakeCodexAppServer()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        Fs.rmSync(location().path)
        expect((yield* step.uninstall(runOf("uninstall"))).detail).toBe(
          `nothing to remove: already gone (${location().path})`
        )
        expect(manifestJson().codex_skills).toBeUndefined()
        expect(Fs.existsSync(location().dir)).toBe(false)
      })
    )
  })
})

describe("codex_skills with the real Codex", () => {
  /** The @openai/codex dev dependency, offline, asked through `codex app-server` in the test's home. */
  const realCodex = {
    layer: Layer.suspend(() => CodexAppServerLive.pipe(Layer.provide(Paths.layerFrom(pathInputs(fresh.home())))))
  }
  const bin = NodePath.resolve(NodePath.dirname(PACKAGED), "..", "..", "node_modules", ".bin")

  it.effect(
    "Codex lists the installed skill enabled; disabled in config.toml, status fails and install leaves it so",
    () =>
      withStep(realCodex, (step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          yield* step.verify(runOf("status"))
          const config = NodePath.join(pathInputs(fresh.home()).CODEX_HOME, "config.toml")
          const entry = `[[skills.config]]\npath = "${location().path}"\nenabled = false\n`
          Fs.writeFileSync(config, entry)
          expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toMatch(
            / is disabled in .*; blctx leaves it disabled$/
          )
          yield* step.install(runOf("install"))
          expect(Fs.readFileSync(config, "utf8")).toBe(entry)
        })
      ).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PATH", `${bin}:${process.env.PATH ?? ""}`]]))))
  )
})

describe("codex_skills between check and use", () => {
  const outside = () => outsideFile(NodePath.join(fresh.home(), "outside.md"))
  const swapping = (options: Omit<Parameters<typeof swappingSafeFs>[0], "path">) =>
    swappingSafeFs({ path: location().path, ...options })

  it.effect(
    "an upgrade refuses a skill file swapped for a link after it was hashed; nothing is written through it",
    () => {
      const fake = makeFakeCodexAppServer()
      const v1 = bundledCopy("v1", "First version.")
      const v2 = bundledCopy("v2", "Second version.")
      return Effect.gen(function* () {
        yield* withStep(fake, (step) => step.install(runOf("install")), { skill: v1 })
        const target = outside()
        const refused = failureOf(
          yield* Effect.either(
            withStep(fake, (step) => step.install(runOf("install")), {
              skill: v2,
              safeFs: swapping({ after: "read", swap: symlinkSwap(location().path, target.path) })
            })
          )
        )
        expect(refused.detail).toBe(
          `${location().path} was replaced by a symbolic link between check and use; left untouched`
        )
        expect(target.untouched()).toBe(true)
        expect(Fs.lstatSync(location().path).isSymbolicLink()).toBe(true)
      })
    }
  )

  it.effect("an upgrade refuses a skill file that gained a hard link after it was hashed", () => {
    const fake = makeFakeCodexAppServer()
    const v1 = bundledCopy("v1", "First version.")
    const v2 = bundledCopy("v2", "Second version.")
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")), { skill: v1 })
      const alias = NodePath.join(fresh.home(), "alias.md")
      const refused = failureOf(
        yield* Effect.either(
          withStep(fake, (step) => step.install(runOf("install")), {
            skill: v2,
            safeFs: swapping({ after: "read", swap: extraLinkSwap(location().path, alias) })
          })
        )
      )
      expect(refused.detail).toBe(`${location().path} gained a second hard link between check and use; left untouched`)
      expect(Fs.readFileSync(alias, "utf8")).toBe(Fs.readFileSync(v1, "utf8"))
    })
  })

  it.effect("hashing refuses a skill file swapped for a link after its lstat", () => {
    const fake = makeFakeCodexAppServer()
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")))
      const target = outside()
      // checkOwnership's lstat is the first; inspecting the file is the second.
      const refused = failureOf(
        yield* Effect.either(
          withStep(fake, (step) => step.install(runOf("install")), {
            safeFs: swapping({ call: 2, swap: symlinkSwap(location().path, target.path) })
          })
        )
      )
      expect(refused.detail).toBe(
        `${location().path} was replaced by a symbolic link between check and use; left untouched`
      )
      expect(target.untouched()).toBe(true)
    })
  })

  it.effect("uninstall refuses a skill file swapped for a link after it was hashed; the target survives", () => {
    const fake = makeFakeCodexAppServer()
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")))
      const target = outside()
      const refused = failureOf(
        yield* Effect.either(
          withStep(fake, (step) => step.uninstall(runOf("uninstall")), {
            safeFs: swapping({ after: "read", swap: symlinkSwap(location().path, target.path) })
          })
        )
      )
      expect(refused.detail).toBe(
        `${location().path} was replaced by a symbolic link between check and use; left untouched`
      )
      expect(target.untouched()).toBe(true)
      expect(manifestJson().codex_skills).toHaveLength(1)
    })
  })

  it.effect("uninstall refuses a skill file replaced by a hard link to another file; that file survives", () => {
    const fake = makeFakeCodexAppServer()
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")))
      const target = outside()
      const refused = failureOf(
        yield* Effect.either(
          withStep(fake, (step) => step.uninstall(runOf("uninstall")), {
            safeFs: swapping({ after: "read", swap: hardLinkSwap(location().path, target.path) })
          })
        )
      )
      expect(refused.detail).toBe(
        `${location().path} was replaced by another file between check and use; left untouched`
      )
      expect(target.untouched()).toBe(true)
      expect(Fs.statSync(target.path).nlink).toBe(2)
    })
  })
})
