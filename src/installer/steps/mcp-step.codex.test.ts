import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { type FakeCodexState, makeFakeCodexCli, stdioEntry } from "../../../testing/fake-codex-cli.js"
import { codexConfigFile } from "../../codex/codex-cli.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths, resolvePaths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { AGENTS } from "../agents/agents.js"
import { CODEX_MCP_NAME } from "../agents/codex.js"
import type { Step, StepFailure } from "../step.js"
import { mcpStep } from "./mcp-step.js"

const codexMcpStep = mcpStep(AGENTS.codex)

import { diagnoseOf, INSTALLATION, pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()

/** The installation's MCP entry: a real file in the test's home, since verify checks it exists. */
const mcpEntry = (name = "blctx-mcp.mjs") => {
  const path = NodePath.join(fresh.home(), "pkg", "dist", "bin", name)
  Fs.mkdirSync(NodePath.dirname(path), { recursive: true })
  Fs.writeFileSync(path, "")
  return path
}

/** The home's inputs, with the Codex home given (default `<home>/codex`, created). */
const inputs = (codexHome?: string) => {
  const base = pathInputs(fresh.home())
  const home = codexHome ?? base.CODEX_HOME
  Fs.mkdirSync(home, { recursive: true })
  return { ...base, CODEX_HOME: home }
}

const layerOf = (fake: ReturnType<typeof makeFakeCodexCli>, options: { mcp?: string; codexHome?: string } = {}) =>
  Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, {
      node: process.execPath,
      cli: process.execPath,
      daemon: process.execPath,
      mcp: options.mcp ?? mcpEntry(),
      hook: process.execPath,
      skill: process.execPath
    }),
    fake.layer
  ).pipe(Layer.provideMerge(Paths.layerFrom(inputs(options.codexHome))), Layer.provideMerge(NodeSafeFsLive))

/** Runs `use` with the step built over the fake Codex. */
const withStep = <A, E>(
  fake: ReturnType<typeof makeFakeCodexCli>,
  use: (step: Step) => Effect.Effect<A, E>,
  options: { mcp?: string; codexHome?: string } = {}
) => Effect.flatMap(codexMcpStep, use).pipe(Effect.provide(layerOf(fake, options)))

/** What this installation registers. */
const expected = (mcp = mcpEntry()) => {
  const p = resolvePaths(inputs())
  return {
    name: CODEX_MCP_NAME,
    command: process.execPath,
    args: [
      mcp,
      "--installation-id",
      INSTALLATION,
      "--data-home",
      p.dataHome,
      "--config-home",
      p.configHome,
      "--cache-home",
      p.cacheHome,
      "--state-home",
      p.stateHome
    ]
  }
}

const codexHome = () => resolvePaths(inputs()).codexHome
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const addsIn = (state: FakeCodexState) => state.calls.filter((c) => c.includes("codex mcp add"))
const failureOf = <A>(result: Either.Either<A, StepFailure | unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}

const OTHER = stdioEntry({ name: "other", command: "/bin/true", args: ["--flag"] }, { env: { TOKEN_VAR: "x" } })

describe("codex_mcp install", () => {
  it.effect(
    "registers base-layer-context with node, the MCP entry and the daemon's arguments, records it, verifies",
    () => {
      const fake = makeFakeCodexCli()
      return withStep(fake, (step) =>
        Effect.gen(function* () {
          const installed = yield* step.install(runOf("install"))
          expect(installed.detail).toBe(
            `registered ${CODEX_MCP_NAME} in ${codexConfigFile(codexHome())} (${mcpEntry()}, installation ${INSTALLATION})`
          )
          expect(fake.homeOf(codexHome()).get(CODEX_MCP_NAME)).toEqual(stdioEntry(expected()))
          expect(manifestJson().codex_mcp).toEqual([{ codex_home: codexHome(), ...expected() }])
          const verified = yield* step.verify(runOf("status"))
          expect(verified.detail).toBe(
            `${CODEX_MCP_NAME} in ${codexConfigFile(codexHome())} runs ${mcpEntry()}, installation ${INSTALLATION}`
          )
        })
      )
    }
  )

  it.effect("is idempotent: a rerun leaves the identical owned entry as it is and adds nothing", () => {
    const fake = makeFakeCodexCli()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const manifestBefore = Fs.readFileSync(fresh.paths().manifest, "utf8")
        const again = yield* step.install(runOf("install"))
        expect(again.detail).toMatch(/^base-layer-context in .* already registered \(.*\), left as is$/)
        expect(addsIn(fake.state)).toHaveLength(1)
        expect(Fs.readFileSync(fresh.paths().manifest, "utf8")).toBe(manifestBefore)
      })
    )
  })

  it.effect("preserves an unrelated entry through install and uninstall", () => {
    const fake = makeFakeCodexCli()
    fake.homeOf(codexHome()).set("other", OTHER)
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        expect(fake.homeOf(codexHome()).get("other")).toEqual(OTHER)
        const removed = yield* step.uninstall(runOf("uninstall"))
        expect(removed.detail).toBe(`removed ${CODEX_MCP_NAME} from ${codexConfigFile(codexHome())}`)
        expect([...fake.homeOf(codexHome()).keys()]).toEqual(["other"])
        expect(fake.homeOf(codexHome()).get("other")).toEqual(OTHER)
        expect(fake.state.calls.filter((c) => c.includes("remove"))).toEqual([
          `${codexHome()}: codex mcp remove ${CODEX_MCP_NAME}`
        ])
      })
    )
  })

  it.effect("refuses an entry of the same name that blctx did not register, and changes nothing", () => {
    const fake = makeFakeCodexCli()
    const theirs = stdioEntry({ name: CODEX_MCP_NAME, command: "/usr/bin/python3", args: ["server.py"] })
    fake.homeOf(codexHome()).set(CODEX_MCP_NAME, theirs)
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toBe(
          `${codexConfigFile(codexHome())} already has an MCP server named ${CODEX_MCP_NAME} that blctx did not register (stdio: /usr/bin/python3 server.py, enabled); it was left untouched`
        )
        expect(refused.remediation).toBe(
          `If it is not needed, remove it (CODEX_HOME=${codexHome()} codex mcp remove ${CODEX_MCP_NAME}), then run: blctx install codex --step codex_mcp`
        )
        expect(fake.homeOf(codexHome()).get(CODEX_MCP_NAME)).toEqual(theirs)
        expect(addsIn(fake.state)).toEqual([])
        expect(manifestJson().codex_mcp).toBeUndefined()
        // Status says the same, and uninstall leaves what is not blctx's.
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(refused.detail)
        const uninstalled = yield* step.uninstall(runOf("uninstall"))
        expect(uninstalled.detail).toBe("nothing to remove: blctx has no MCP server registered with Codex")
        expect(fake.homeOf(codexHome()).get(CODEX_MCP_NAME)).toEqual(theirs)
      })
    )
  })

  it.effect("refuses an owned entry a person changed, in install, status and uninstall, and keeps it", () => {
    const fake = makeFakeCodexCli()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        const changed = stdioEntry({ ...expected(), args: [...expected().args, "--verbose"] })
        fake.homeOf(codexHome()).set(CODEX_MCP_NAME, changed)

        const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(refused.detail).toMatch(
          new RegExp(
            `^${CODEX_MCP_NAME} in .*config\\.toml was changed after blctx registered it \\(it now runs .*--verbose, enabled; blctx wrote .*\\); it was left untouched$`
          )
        )
        expect(refused.remediation).toContain(
          `codex mcp remove ${CODEX_MCP_NAME}, then run: blctx install codex --step codex_mcp`
        )
        expect(fake.homeOf(codexHome()).get(CODEX_MCP_NAME)).toEqual(changed)
        expect(addsIn(fake.state)).toHaveLength(1)

        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(refused.detail)

        const kept = failureOf(yield* Effect.either(step.uninstall(runOf("uninstall"))))
        expect(kept.detail).toMatch(/was changed after blctx registered it .*; it was left untouched$/)
        expect(kept.remediation).toBe(
          `If you no longer need it: CODEX_HOME=${codexHome()} codex mcp remove ${CODEX_MCP_NAME}`
        )
        expect(fake.homeOf(codexHome()).get(CODEX_MCP_NAME)).toEqual(changed)
        // Still recorded: a later install keeps refusing rather than calling it someone else's.
        expect(manifestJson().codex_mcp).toHaveLength(1)
      })
    )
  })

  it.effect("a missing codex is a clear failure with the install command", () => {
    const fake = makeFakeCodexCli({ installed: false })
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const missing = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(missing.detail).toBe(
          "the codex command was not found on PATH (/usr/bin:/bin); blctx registers its MCP server through the Codex CLI"
        )
        expect(missing.remediation).toBe(
          "Install Codex: npm install -g @openai/codex (or put codex on PATH), then run: blctx install codex --step codex_mcp"
        )
        expect(missing.errorTag).toBe("CodexNotFound")
        expect(manifestJson().codex_mcp).toBeUndefined()
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).errorTag).toBe("CodexNotFound")
        expect(failureOf(yield* Effect.either(diagnoseOf(step, runOf("doctor")))).errorTag).toBe("CodexNotFound")
      })
    )
  })

  it.effect("says what codex reported when it cannot read its config, and records nothing", () => {
    const fake = makeFakeCodexCli({ failing: { get: "Error: failed to load bootstrap configuration" } })
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const failed = failureOf(yield* Effect.either(step.install(runOf("install"))))
        expect(failed.detail).toBe(
          `codex mcp get ${CODEX_MCP_NAME} --json failed (CODEX_HOME ${codexHome()}): Error: failed to load bootstrap configuration`
        )
        expect(failed.remediation).toBe(
          `Fix what codex reports in ${codexConfigFile(codexHome())} (check with: CODEX_HOME=${codexHome()} codex mcp list), then run: blctx install codex --step codex_mcp`
        )
        expect(manifestJson().codex_mcp).toBeUndefined()
      })
    )
  })

  it.effect("records before adding, so an add that failed is retried as blctx's own", () => {
    const fake = makeFakeCodexCli({ failing: { add: "disk full" } })
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        expect(failureOf(yield* Effect.either(step.install(runOf("install")))).detail).toContain("disk full")
        expect(manifestJson().codex_mcp).toHaveLength(1)
        expect(failureOf(yield* Effect.either(step.verify(runOf("status")))).detail).toBe(
          `${CODEX_MCP_NAME} is no longer registered in ${codexConfigFile(codexHome())} (it was removed after install)`
        )
        // Nothing registered yet: uninstall has nothing to remove and forgets the record.
        fake.state.failing = {}
        const nothing = yield* step.uninstall(runOf("uninstall"))
        expect(nothing.detail).toBe(
          `nothing to remove: ${CODEX_MCP_NAME} was already gone from ${codexConfigFile(codexHome())}`
        )
        expect(manifestJson().codex_mcp).toBeUndefined()
        yield* step.install(runOf("install"))
        yield* step.verify(runOf("status"))
      })
    )
  })

  it.effect("verify fails for a disabled registration and for one that is gone", () => {
    const fake = makeFakeCodexCli()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        yield* step.install(runOf("install"))
        fake.homeOf(codexHome()).set(CODEX_MCP_NAME, stdioEntry(expected(), { enabled: false }))
        const disabled = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(disabled.detail).toBe(
          `${CODEX_MCP_NAME} is disabled in ${codexConfigFile(codexHome())}, so Codex does not start it`
        )
        fake.homeOf(codexHome()).delete(CODEX_MCP_NAME)
        const gone = failureOf(yield* Effect.either(step.verify(runOf("status"))))
        expect(gone.remediation).toBe("Run: blctx install codex --step codex_mcp")
      })
    )
  })
})

describe("codex_mcp when the installation moved", () => {
  it.effect("an owned entry written for other paths fails status and is updated by install", () => {
    const fake = makeFakeCodexCli()
    const old = mcpEntry("old-blctx-mcp.mjs")
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")), { mcp: old })
      yield* withStep(fake, (step) =>
        Effect.gen(function* () {
          const outdated = failureOf(yield* Effect.either(step.verify(runOf("status"))))
          expect(outdated.detail).toContain(`runs ${process.execPath} ${old} --installation-id`)
          expect(outdated.detail).toContain(`not what this installation writes (${process.execPath} ${mcpEntry()} `)
          const updated = yield* step.install(runOf("install"))
          expect(updated.detail).toMatch(/^updated base-layer-context in .*; it ran .*old-blctx-mcp\.mjs/)
          expect(fake.homeOf(codexHome()).get(CODEX_MCP_NAME)).toEqual(stdioEntry(expected()))
          expect(manifestJson().codex_mcp).toEqual([{ codex_home: codexHome(), ...expected() }])
          yield* step.verify(runOf("status"))
        })
      )
    })
  })

  it.effect("uninstall removes the registration from the Codex home it was made in, after CODEX_HOME changed", () => {
    const fake = makeFakeCodexCli()
    const first = NodePath.join(fresh.home(), "codex-first")
    const second = NodePath.join(fresh.home(), "codex-second")
    fake.homeOf(first).set("other", OTHER)
    return Effect.gen(function* () {
      yield* withStep(fake, (step) => step.install(runOf("install")), { codexHome: first })
      yield* withStep(
        fake,
        (step) =>
          Effect.gen(function* () {
            const missing = failureOf(yield* Effect.either(step.verify(runOf("status"))))
            expect(missing.detail).toBe(`${CODEX_MCP_NAME} is not registered in ${codexConfigFile(second)}`)
            const removed = yield* step.uninstall(runOf("uninstall"))
            expect(removed.detail).toBe(`removed ${CODEX_MCP_NAME} from ${codexConfigFile(first)}`)
            expect([...fake.homeOf(first).keys()]).toEqual(["other"])
            expect(manifestJson().codex_mcp).toBeUndefined()
            const again = yield* step.uninstall(runOf("uninstall"))
            expect(again.detail).toBe("nothing to remove: blctx has no MCP server registered with Codex")
          }),
        { codexHome: second }
      )
    })
  })
})

describe("codex_mcp diagnose (doctor)", () => {
  it.effect("reports which codex answers, the config file and what Codex holds under the name", () => {
    const fake = makeFakeCodexCli()
    return withStep(fake, (step) =>
      Effect.gen(function* () {
        const before = yield* diagnoseOf(step, runOf("doctor"))
        expect(before.detail).toBe(
          `codex codex-cli 0.0.0-fake at /usr/local/bin/codex; config ${codexConfigFile(codexHome())} (not created yet); Codex reports no server named ${CODEX_MCP_NAME}; blctx records no registration`
        )
        yield* step.install(runOf("install"))
        const after = yield* diagnoseOf(step, runOf("doctor"))
        expect(after.detail).toContain(
          `Codex reports ${CODEX_MCP_NAME} = stdio: ${process.execPath} ${expected().args.join(" ")}, enabled; blctx records one in ${codexHome()}`
        )
      })
    )
  })
})
