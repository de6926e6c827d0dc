import { Effect, Layer } from "effect"
import {
  McpProbe,
  McpProbeFailed,
  type McpProbeSession,
  type McpServerCommand,
  type McpToolAnswer
} from "../src/mcp/mcp-probe.js"

/** A tool's answer in the fake: a structured result, or an `isError` with its text. */
export type FakeToolAnswer = McpToolAnswer | ((args: Record<string, unknown>) => McpToolAnswer)

/** What the fake server does, and what it was asked. */
export interface FakeMcpProbeState {
  /** The tools `tools/list` names. */
  tools: ReadonlyArray<string>
  /** Answers by tool name; a tool without one answers a tool error. */
  answers: Record<string, FakeToolAnswer>
  /** Launching fails in this phase, with this reason (a missing program, a crash at initialize). */
  launchFailure: { readonly phase: McpProbeFailed["phase"]; readonly reason: string; readonly stderr?: string } | null
  /** Every command launched. */
  readonly launched: Array<McpServerCommand>
  /** Every call made, in order. */
  readonly calls: Array<{ readonly name: string; readonly args: Record<string, unknown> }>
}

export const ok = (structured: unknown): McpToolAnswer => ({
  isError: false,
  structured,
  text: JSON.stringify(structured)
})

/** A tool error as blctx's server writes it: one JSON text block `{error: {...}}`. */
export const toolError = (kind: string, tool: string, message: string, remediation: string): McpToolAnswer => ({
  isError: true,
  structured: undefined,
  text: JSON.stringify({ error: { kind, tool, message, remediation } })
})

/** An in-memory MCP server for unit tests: no process, tools and answers as the test sets them. */
export const makeFakeMcpProbe = (over: Partial<FakeMcpProbeState> = {}) => {
  const state: FakeMcpProbeState = {
    tools: [],
    answers: {},
    launchFailure: null,
    launched: [],
    calls: [],
    ...over
  }
  const layer = Layer.succeed(
    McpProbe,
    McpProbe.of({
      withSession: <A, E>(
        server: McpServerCommand,
        _timeout: unknown,
        use: (session: McpProbeSession) => Effect.Effect<A, E>
      ) =>
        Effect.suspend((): Effect.Effect<A, E | McpProbeFailed> => {
          state.launched.push(server)
          const f = state.launchFailure
          if (f !== null)
            return Effect.fail(new McpProbeFailed({ phase: f.phase, reason: f.reason, stderr: f.stderr ?? "" }))
          return use({
            server: "blctx-fake 0.0.0",
            listTools: Effect.sync(() => [...state.tools]),
            callTool: (name, args) =>
              Effect.sync(() => {
                state.calls.push({ name, args })
                const answer = state.answers[name]
                if (answer === undefined) return toolError("unknown_tool", name, `no tool ${name}`, "none")
                return typeof answer === "function" ? answer(args) : answer
              })
          })
        })
    })
  )
  return { state, layer }
}
