import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { GeminiCliEveryCall } from "../../../layers/gemini-cli-live.js"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { AGENTS } from "../agents/agents.js"
import { GEMINI_MCP_NAME } from "../agents/gemini.js"
import type { Step, StepFailure } from "../step.js"
import { mcpServerCommand } from "./mcp-server-command.js"
import { mcpStep } from "./mcp-step.js"
import { writeFakeMcpServer } from "./real-claude.test-support.js"
import { INSTALLATION, pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"

/** gemini_mcp over the generic MCP step, with the real Gemini CLI (test-tools) and a fake stdio server. */
const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const geminiBin = NodePath.join(root, "test-tools", "node_modules", ".bin", "gemini")
const realGemini = () => {
  if (!Fs.existsSync(geminiBin))
    throw new Error(`the real Gemini CLI is missing at ${geminiBin}: run npm run test:tools`)
  return geminiBin
}

const fresh = useActiveHome()

const programsOf = (home: string) => {
  const mcp = writeFakeMcpServer(home)
  return { node: process.execPath, cli: process.execPath, daemon: process.execPath, mcp, hook: mcp, skill: mcp }
}

const layer = () =>
  Layer.mergeAll(
    ManifestStore.Default,
    Layer.succeed(ProgramPaths, programsOf(fresh.home())),
    GeminiCliEveryCall.pipe(
      Layer.provide(
        Layer.setConfigProvider(
          ConfigProvider.fromMap(
            new Map([
              ["PATH", process.env.PATH ?? ""],
              ["BLCTX_GEMINI_BIN", realGemini()]
            ])
          )
        )
      )
    )
  ).pipe(Layer.provideMerge(Paths.layerFrom(pathInputs(fresh.home()))), Layer.provideMerge(NodeSafeFsLive))

const withStep = <A, E>(use: (step: Step) => Effect.Effect<A, E>) =>
  Effect.flatMap(mcpStep(AGENTS.gemini), use).pipe(Effect.provide(layer()))

/** The person's own `gemini`, in the test home. */
const geminiIn = (args: ReadonlyArray<string>) =>
  execFileSync(realGemini(), [...args], {
    env: { HOME: fresh.home(), PATH: process.env.PATH ?? "", GEMINI_CLI_NO_RELAUNCH: "true", NO_COLOR: "1" },
    cwd: "/",
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  })

const settings = () =>
  JSON.parse(Fs.readFileSync(NodePath.join(fresh.home(), ".gemini", "settings.json"), "utf8")) as {
    mcpServers: Record<string, { command: string; args?: ReadonlyArray<string> }>
  }
const manifestJson = () => JSON.parse(Fs.readFileSync(fresh.paths().manifest, "utf8"))
const failureOf = <A>(result: Either.Either<A, unknown>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left as StepFailure
}

describe("gemini_mcp with the real Gemini CLI", () => {
  it.effect(
    "registers base-layer-context at user scope through gemini mcp add, keeps other servers, Gemini reports it connected, and uninstall removes only it",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          geminiIn(["mcp", "add", "--scope", "user", "theirs", "/bin/cat"])
          const installed = yield* step.install(runOf("install"))
          expect(installed.detail).toMatch(/^registered base-layer-context at user scope in /)
          const desired = mcpServerCommand(programsOf(fresh.home()), fresh.paths(), INSTALLATION)
          expect(settings().mcpServers[GEMINI_MCP_NAME]).toEqual({ command: desired.command, args: [...desired.args] })
          expect(settings().mcpServers.theirs).toEqual({ command: "/bin/cat", args: [] })
          expect(manifestJson().gemini_mcp).toEqual([
            { gemini_home: NodePath.join(fresh.home(), ".gemini"), name: GEMINI_MCP_NAME, ...desired }
          ])
          expect((yield* step.verify(runOf("status"))).detail).toContain("Gemini reports it connected")
          yield* step.uninstall(runOf("uninstall"))
          expect(Object.keys(settings().mcpServers)).toEqual(["theirs"])
          expect(manifestJson().gemini_mcp).toBeUndefined()
        })
      ),
    120_000
  )

  it.effect(
    "refuses a server of that name blctx did not register, and leaves it as it was",
    () =>
      withStep((step) =>
        Effect.gen(function* () {
          geminiIn(["mcp", "add", "--scope", "user", GEMINI_MCP_NAME, "/bin/cat", "--", "mine"])
          const refused = failureOf(yield* Effect.either(step.install(runOf("install"))))
          expect(refused.detail).toContain("that blctx did not register (stdio: /bin/cat mine)")
          expect(refused.remediation).toContain(`gemini mcp remove --scope user ${GEMINI_MCP_NAME}`)
          expect(settings().mcpServers[GEMINI_MCP_NAME]).toEqual({ command: "/bin/cat", args: ["mine"] })
          expect(manifestJson().gemini_mcp).toBeUndefined()
        })
      ),
    120_000
  )
})
