import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { VERSION } from "../../version.js"
import { AGENTS } from "../agents/agents.js"
import type { Step, StepFailure } from "../step.js"
import { skillsStep } from "./skills-step.js"

const claudeSkillsStep = skillsStep(AGENTS.claude)

import { diagnoseOf, pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"
import { SKILL_NAME, skillLocation } from "./skill-file.js"

const fresh = useActiveHome()

const PACKAGED = NodePath.resolve(
  NodePath.dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "skills",
  SKILL_NAME,
  "SKILL.md"
)
const packaged = () => Fs.readFileSync(PACKAGED, "utf8")
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

interface Options {
  /** CLAUDE_CONFIG_DIR (default `<home>/.claude`, created). */
  readonly claudeHome?: string
  readonly skill?: string
}

const claudeHomeOf = (options: Options) => options.claudeHome ?? NodePath.join(fresh.home(), ".claude")

const layerOf = (options: Options) => {
  const claudeHome = claudeHomeOf(options)
  Fs.mkdirSync(claudeHome, { recursive: true })
  return Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: process.execPath,
      hook: process.execPath,
      skill: options.skill ?? PACKAGED
    })
  ).pipe(
    Layer.provideMerge(
      Paths.layerFrom({
        ...pathInputs(fresh.home()),
        ...(options.claudeHome === undefined ? {} : { CLAUDE_CONFIG_DIR: options.claudeHome })
      })
    ),
    Layer.provideMerge(NodeSafeFsLive)
  )
}

const withStep = <A, E>(use: (step: Step) => Effect.Effect<A, E>, options: Options = {}) =>
  Effect.flatMap(claudeSkillsStep, use).pipe(Effect.provide(layerOf(options)))

const location = (options: Options = {}) => skillLocation(claudeHomeOf(options))
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const modeOf = (path: string) => Fs.statSync(path).mode & 0o777
const failureOf = <A>(result: Either.Either<A, StepFailure | unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}
const failing = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.either(effect), failureOf)

describe("claude_skills", () => {
  it.effect("writes the skill privately under the Claude configuration, records it, and verifies the file", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const { root, dir, path } = location()
        const installed = yield* step.install(runOf("install"))
        expect(installed.detail).toBe(`installed the ${SKILL_NAME} skill at ${path} (blctx ${VERSION})`)
        expect(Fs.readFileSync(path, "utf8")).toBe(packaged())
        expect([modeOf(root), modeOf(dir), modeOf(path)]).toEqual([0o700, 0o700, 0o600])
        const manifest = manifestJson()
        expect(manifest.claude_skills).toEqual([
          { claude_home: claudeHomeOf({}), root, path, version: VERSION, sha256: sha(packaged()) }
        ])
        expect(manifest.codex_skills).toBeUndefined()
        expect(manifest.created_directories).toEqual(expect.arrayContaining([root, dir]))
        expect(manifest.owned_files).not.toContain(path)
        expect((yield* step.verify(runOf("status"))).detail).toBe(
          `${SKILL_NAME} is at ${path} as blctx wrote it (blctx ${VERSION})`
        )
        expect((yield* step.install(runOf("install"))).detail).toMatch(/already holds .*, left as is$/)
        expect((yield* diagnoseOf(step, runOf("doctor"))).detail).toContain("(as blctx wrote it)")
      })
    )
  )

  it.effect("upgrades an unchanged file blctx wrote; keeps an edited one and reports it", () => {
    const older = NodePath.join(fresh.home(), "pkg", "SKILL.md")
    Fs.mkdirSync(NodePath.dirname(older), { recursive: true })
    Fs.writeFileSync(older, `---\nname: ${SKILL_NAME}\ndescription: Old.\n---\n`)
    return withStep((step) => step.install(runOf("install")), { skill: older }).pipe(
      Effect.andThen(
        withStep((step) =>
          Effect.gen(function* () {
            const outdated = yield* failing(step.verify(runOf("status")))
            expect(outdated.remediation).toBe("Run: blctx install claude --step claude_skills")
            expect((yield* step.install(runOf("install"))).detail).toMatch(/^updated .* to the skill blctx/)
            expect(Fs.readFileSync(location().path, "utf8")).toBe(packaged())
            Fs.appendFileSync(location().path, "\nmy note\n")
            const edited = yield* failing(step.verify(runOf("status")))
            expect(edited.detail).toContain("was changed after blctx wrote it")
            const again = yield* failing(step.install(runOf("install")))
            expect(again.remediation).toContain(`rm ${location().path}`)
            const kept = yield* failing(step.uninstall(runOf("uninstall")))
            expect(kept.detail).toBe(`${location().path} was changed after blctx wrote it; it was kept`)
            expect(Fs.readFileSync(location().path, "utf8")).toContain("my note")
          })
        )
      )
    )
  })

  it.effect("leaves a skill folder it did not create, a symbolic link and a hard link alone", () =>
    withStep((step) =>
      Effect.gen(function* () {
        const { dir, path } = location()
        Fs.mkdirSync(dir, { recursive: true })
        Fs.writeFileSync(path, "theirs")
        const foreign = yield* failing(step.install(runOf("install")))
        expect(foreign.detail).toBe(`${path} already exists and blctx did not write it; it was left untouched`)
        expect(Fs.readFileSync(path, "utf8")).toBe("theirs")

        Fs.rmSync(dir, { recursive: true })
        const elsewhere = NodePath.join(fresh.home(), "elsewhere")
        Fs.mkdirSync(elsewhere)
        Fs.symlinkSync(elsewhere, dir)
        const link = yield* failing(step.install(runOf("install")))
        expect(link.detail).toContain(`${dir} is a symbolic link`)
        expect(Fs.readdirSync(elsewhere)).toEqual([])
      })
    )
  )

  it.effect("refuses a hard-linked skill file blctx recorded", () =>
    withStep((step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const other = NodePath.join(fresh.home(), "other-name.md")
        Fs.linkSync(location().path, other)
        const refused = yield* failing(step.install(runOf("install")))
        expect(refused.detail).toContain("has 2 hard links")
        const status = yield* failing(step.verify(runOf("status")))
        expect(status.detail).toContain("has 2 hard links")
      })
    )
  )

  it.effect(
    "uninstall removes the file from the recorded root after CLAUDE_CONFIG_DIR changed, keeping other skills",
    () => {
      const first = NodePath.join(fresh.home(), "claude-a")
      const other = NodePath.join(first, "skills", "someone-elses")
      return withStep((step) => step.install(runOf("install")), { claudeHome: first }).pipe(
        Effect.andThen(() => {
          Fs.mkdirSync(other)
          Fs.writeFileSync(NodePath.join(other, "SKILL.md"), "theirs")
        }),
        Effect.andThen(
          withStep((step) => step.uninstall(runOf("uninstall")), {
            claudeHome: NodePath.join(fresh.home(), "claude-b")
          })
        ),
        Effect.tap((removed) => {
          expect(removed.detail).toBe(`removed ${location({ claudeHome: first }).path}`)
          expect(Fs.existsSync(location({ claudeHome: first }).dir)).toBe(false)
          // The skills root holds someone else's skill, so it stays.
          expect(Fs.readFileSync(NodePath.join(other, "SKILL.md"), "utf8")).toBe("theirs")
          const manifest = manifestJson()
          expect(manifest.claude_skills).toBeUndefined()
          expect(manifest.created_directories).not.toContain(location({ claudeHome: first }).dir)
          expect(manifest.created_directories).toContain(location({ claudeHome: first }).root)
        })
      )
    }
  )

  it.effect("a missing Claude configuration directory fails with how to create it", () =>
    withStep((step) =>
      Effect.gen(function* () {
        Fs.rmSync(claudeHomeOf({}), { recursive: true })
        const missing = yield* failing(step.install(runOf("install")))
        expect(missing.detail).toBe(`Claude Code's configuration directory ${claudeHomeOf({})} does not exist`)
        expect(missing.remediation).toContain("Start Claude Code once")
      })
    )
  )
})
