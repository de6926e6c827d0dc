import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { AGENTS } from "../agents/agents.js"
import { CLAUDE_MCP_NAME } from "../agents/claude.js"
import type { Step, StepFailure } from "../step.js"
import { mcpServerCommand } from "./mcp-server-command.js"
import { mcpStep } from "./mcp-step.js"

const claudeMcpStep = mcpStep(AGENTS.claude)

import { claudeIn, realClaude, realClaudeLayer, writeFakeMcpServer } from "./real-claude.test-support.js"
import { diagnoseOf, INSTALLATION, pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()

interface Options {
  /** CLAUDE_CONFIG_DIR (default: unset, so `<home>/.claude` and `<home>/.claude.json`). */
  readonly claudeConfigDir?: string
  /** BLCTX_CLAUDE_BIN (default: the real CLI from test-tools). */
  readonly claudeBin?: string
}

const programsOf = (home: string) => {
  const mcp = writeFakeMcpServer(home)
  return { node: process.execPath, cli: process.execPath, daemon: process.execPath, mcp, hook: mcp, skill: mcp }
}

const layerOf = (options: Options) =>
  Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, programsOf(fresh.home())),
    realClaudeLayer(options.claudeBin ?? realClaude())
  ).pipe(
    Layer.provideMerge(
      Paths.layerFrom({
        ...pathInputs(fresh.home()),
        ...(options.claudeConfigDir === undefined ? {} : { CLAUDE_CONFIG_DIR: options.claudeConfigDir })
      })
    ),
    Layer.provideMerge(NodeSafeFsLive)
  )

const withStep = <A, E>(use: (step: Step) => Effect.Effect<A, E>, options: Options = {}) =>
  Effect.flatMap(claudeMcpStep, use).pipe(Effect.provide(layerOf(options)))

const failureOf = <A>(result: Either.Either<A, StepFailure | unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}
const failing = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.either(effect), failureOf)

const userConfig = () => JSON.parse(Fs.readFileSync(NodePath.join(fresh.home(), ".claude.json"), "utf8"))
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const desired = () => mcpServerCommand(programsOf(fresh.home()), fresh.paths(), INSTALLATION)

describe("claude_mcp with the real Claude Code CLI", () => {
  it.effect(
    "registers base-layer-context at user scope, keeps other servers, records it, and Claude reports it connected",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          claudeIn(fresh.home(), ["mcp", "add", "--scope", "user", "theirs", "--", "/bin/cat"])
          const installed = yield* step.install(runOf("install"))
          expect(installed.detail).toMatch(/^registered base-layer-context at user scope in /)
          const servers = userConfig().mcpServers
          expect(servers.theirs).toMatchObject({ command: "/bin/cat" })
          expect(servers[CLAUDE_MCP_NAME]).toMatchObject({ type: "stdio", ...desired(), args: [...desired().args] })
          expect(manifestJson().claude_mcp).toEqual([
            { claude_home: NodePath.join(fresh.home(), ".claude"), name: CLAUDE_MCP_NAME, ...desired() }
          ])
          const verified = yield* step.verify(runOf("status"))
          expect(verified.detail).toMatch(/Claude reports it connected$/)
          const again = yield* step.install(runOf("install"))
          expect(again.detail).toMatch(/already registered .*, left as is$/)
          const doctor = yield* diagnoseOf(step, runOf("doctor"))
          expect(doctor.detail).toContain("Connected")
        })
      ),
    60_000
  )

  it.effect(
    "refuses a server of that name blctx did not register, and leaves it as it was",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          claudeIn(fresh.home(), ["mcp", "add", "--scope", "user", CLAUDE_MCP_NAME, "--", "/bin/cat", "mine"])
          const refused = yield* failing(step.install(runOf("install")))
          expect(refused.detail).toContain("that blctx did not register (stdio: /bin/cat mine)")
          expect(refused.remediation).toContain(`claude mcp remove --scope user ${CLAUDE_MCP_NAME}`)
          expect(userConfig().mcpServers[CLAUDE_MCP_NAME]).toMatchObject({ command: "/bin/cat", args: ["mine"] })
          expect(manifestJson().claude_mcp).toBeUndefined()
          // Uninstall has no record, so it touches nothing.
          expect((yield* step.uninstall(runOf("uninstall"))).detail).toBe(
            "nothing to remove: blctx has no MCP server registered with Claude Code"
          )
          expect(userConfig().mcpServers[CLAUDE_MCP_NAME]).toBeDefined()
        })
      ),
    60_000
  )

  it.effect(
    "an entry changed after install fails status and is kept by uninstall, with its record",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          yield* step.install(runOf("install"))
          claudeIn(fresh.home(), ["mcp", "remove", "--scope", "user", CLAUDE_MCP_NAME])
          claudeIn(fresh.home(), ["mcp", "add", "--scope", "user", CLAUDE_MCP_NAME, "--", "/bin/cat", "edited"])
          const status = yield* failing(step.verify(runOf("status")))
          expect(status.detail).toContain("was changed after blctx registered it")
          const again = yield* failing(step.install(runOf("install")))
          expect(again.detail).toContain("was changed after blctx registered it")
          const removal = yield* failing(step.uninstall(runOf("uninstall")))
          expect(removal.detail).toContain("it was left untouched")
          expect(userConfig().mcpServers[CLAUDE_MCP_NAME]).toMatchObject({ args: ["edited"] })
          expect(manifestJson().claude_mcp).toHaveLength(1)
        })
      ),
    60_000
  )

  it.effect(
    "uninstall removes only its own entry, then has nothing to remove; status says it is gone",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          claudeIn(fresh.home(), ["mcp", "add", "--scope", "user", "theirs", "--", "/bin/cat"])
          yield* step.install(runOf("install"))
          const removed = yield* step.uninstall(runOf("uninstall"))
          expect(removed.detail).toBe(`removed ${CLAUDE_MCP_NAME} from ${NodePath.join(fresh.home(), ".claude.json")}`)
          expect(Object.keys(userConfig().mcpServers)).toEqual(["theirs"])
          expect(manifestJson().claude_mcp).toBeUndefined()
          expect((yield* step.uninstall(runOf("uninstall"))).detail).toBe(
            "nothing to remove: blctx has no MCP server registered with Claude Code"
          )
          const status = yield* failing(step.verify(runOf("status")))
          expect(status.detail).toContain("is not registered with Claude Code")
        })
      ),
    60_000
  )

  it.effect(
    "works in a CLAUDE_CONFIG_DIR, and uninstall uses the recorded one after it changed",
    () => {
      const configDir = NodePath.join(fresh.home(), "claude-config")
      Fs.mkdirSync(configDir)
      return withStep((step) => step.install(runOf("install")), { claudeConfigDir: configDir }).pipe(
        Effect.andThen(() => {
          const saved = JSON.parse(Fs.readFileSync(NodePath.join(configDir, ".claude.json"), "utf8"))
          expect(saved.mcpServers[CLAUDE_MCP_NAME]).toBeDefined()
          expect(Fs.existsSync(NodePath.join(fresh.home(), ".claude.json"))).toBe(false)
        }),
        Effect.andThen(withStep((step) => step.uninstall(runOf("uninstall")))),
        Effect.tap((removed) => {
          expect(removed.detail).toBe(`removed ${CLAUDE_MCP_NAME} from ${NodePath.join(configDir, ".claude.json")}`)
          const saved = JSON.parse(Fs.readFileSync(NodePath.join(configDir, ".claude.json"), "utf8"))
          expect(saved.mcpServers?.[CLAUDE_MCP_NAME]).toBeUndefined()
        })
      )
    },
    60_000
  )

  it.effect("a missing claude fails with how to install it or point BLCTX_CLAUDE_BIN at it", () =>
    withStep(
      (step) =>
        Effect.gen(function* () {
          const missing = yield* failing(step.install(runOf("install")))
          expect(missing.errorTag).toBe("ClaudeNotFound")
          expect(missing.detail).toContain("BLCTX_CLAUDE_BIN=/nonexistent/claude is not an executable file")
          expect(missing.remediation).toContain("npm install -g @anthropic-ai/claude-code")
          expect(missing.remediation).toContain("BLCTX_CLAUDE_BIN")
        }),
      { claudeBin: "/nonexistent/claude" }
    )
  )
})
