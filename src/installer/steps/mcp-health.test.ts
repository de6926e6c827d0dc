import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NodeSafeFsLive } from "../../../layers/node-safe-fs.js"
import { makeFakeCodexCli, stdioEntry } from "../../../testing/fake-codex-cli.js"
import { makeFakeMcpProbe, ok, toolError } from "../../../testing/fake-mcp-probe.js"
import { Paths } from "../../paths/paths.js"
import { CODEX_MCP_NAME } from "../agents/codex.js"
import type { StepFailure } from "../step.js"
import { EXPECTED_TOOLS, mcpHealthStep } from "./mcp-health.js"
import { pathInputs, runOf, useActiveHome } from "./service-steps.test-support.js"

const fresh = useActiveHome()

const SERVER = {
  name: CODEX_MCP_NAME,
  command: "/usr/bin/node",
  args: ["/opt/blctx/dist/bin/blctx-mcp.mjs", "--installation-id", "x"]
}
const STATUS = { index_state: "ready", query_mode: "lexical", query_mode_reason: "no embedding model is installed" }

const setUp = (options: { registered?: boolean; enabled?: boolean } = {}) => {
  const codexHome = pathInputs(fresh.home()).CODEX_HOME
  const codex = makeFakeCodexCli()
  if (options.registered !== false) {
    codex.homeOf(codexHome).set(CODEX_MCP_NAME, stdioEntry(SERVER, { enabled: options.enabled ?? true }))
  }
  const probe = makeFakeMcpProbe({ tools: EXPECTED_TOOLS, answers: { context_status: ok(STATUS) } })
  const layer = Layer.mergeAll(codex.layer, probe.layer).pipe(
    Layer.provideMerge(Paths.layerFrom(pathInputs(fresh.home()))),
    Layer.provideMerge(NodeSafeFsLive)
  )
  const run = (command: "install" | "status" | "uninstall" = "status") =>
    Effect.flatMap(mcpHealthStep, (step) =>
      Effect.either(
        command === "install"
          ? step.install(runOf(command))
          : command === "uninstall"
            ? step.uninstall(runOf(command))
            : step.verify(runOf(command))
      )
    ).pipe(Effect.provide(layer))
  return { codex, probe, run }
}

const failureOf = (result: Either.Either<unknown, StepFailure>): StepFailure => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("mcp_health", () => {
  it.effect(
    "launches the registered command, finds every tool, calls context_status and reports latency and index",
    () =>
      Effect.gen(function* () {
        const { probe, run } = setUp()
        const result = yield* run("status")
        expect(Either.isRight(result)).toBe(true)
        if (Either.isRight(result)) {
          expect(result.right.detail).toMatch(
            /^base-layer-context answered over stdio in \d+ ms \(\d+ ms to list its \d+ tools, then context_status\): index ready, queries lexical \(no embedding model is installed\)$/
          )
        }
        expect(probe.state.launched).toEqual([{ command: SERVER.command, args: SERVER.args }])
        expect(probe.state.calls).toEqual([{ name: "context_status", args: {} }])
        expect(EXPECTED_TOOLS).toEqual([
          "search",
          "recent",
          "sessions",
          "context",
          "context_status",
          "open_session",
          "log_update",
          "update_note",
          "note_history",
          "forget"
        ])
      })
  )

  it.effect("install is the same check; uninstall has nothing to remove", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      expect(Either.isRight(yield* run("install"))).toBe(true)
      expect(probe.state.launched).toHaveLength(1)
      const removed = yield* run("uninstall")
      expect(Either.getOrThrow(removed).detail).toContain("nothing to remove")
    })
  )

  it.effect("fails with the codex_mcp remediation when the server is not registered, without launching anything", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp({ registered: false })
      const f = failureOf(yield* run())
      expect(f.detail).toContain(`${CODEX_MCP_NAME} is not registered`)
      expect(f.remediation).toBe("Run: blctx install codex --step codex_mcp")
      expect(probe.state.launched).toEqual([])
    })
  )

  it.effect("fails when the registration is disabled", () =>
    Effect.gen(function* () {
      const { run } = setUp({ enabled: false })
      expect(failureOf(yield* run()).detail).toContain("is disabled")
    })
  )

  it.effect("fails naming a tool the server does not list", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      probe.state.tools = EXPECTED_TOOLS.filter((t) => t !== "log_update")
      const f = failureOf(yield* run())
      expect(f.detail).toContain("does not list log_update")
      expect(probe.state.calls).toEqual([])
    })
  )

  it.effect("an isError answer of context_status fails with its message and remediation", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      probe.state.answers = {
        context_status: toolError(
          "daemon_unavailable",
          "context_status",
          "blctxd is not running",
          "Run: blctx install codex"
        )
      }
      const f = failureOf(yield* run())
      expect(f.detail).toBe("context_status answered an error (daemon_unavailable): blctxd is not running")
      expect(f.remediation).toBe("Run: blctx install codex")
    })
  )

  it.effect("a server that cannot start fails with the phase and its stderr", () =>
    Effect.gen(function* () {
      const { probe, run } = setUp()
      probe.state.launchFailure = {
        phase: "initialize",
        reason: "Connection closed",
        stderr: "Error: Cannot find module"
      }
      const f = failureOf(yield* run())
      expect(f.detail).toContain("initialize failed: Connection closed")
      expect(f.detail).toContain("Cannot find module")
      expect(f.errorTag).toBe("McpProbeFailed")
    })
  )
})
