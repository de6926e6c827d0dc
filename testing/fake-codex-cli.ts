import { Effect, Layer, Option } from "effect"
import {
  CodexCli,
  CodexCommandFailed,
  CodexNotFound,
  type McpServerEntry,
  type StdioServer
} from "../src/codex/codex-cli.js"

/** What the fake Codex holds: registrations per Codex home, and the faults a test asks for. */
export interface FakeCodexState {
  /** False: there is no `codex` on PATH. */
  installed: boolean
  /** `[mcp_servers.*]` of each Codex home's config.toml. */
  readonly homes: Map<string, Map<string, McpServerEntry>>
  /** Operations that fail (as a broken config.toml would make them), with what Codex says. */
  failing: Partial<Record<"get" | "add" | "remove", string>>
  /** Every command run, as a person would type it after `CODEX_HOME=<home>`. */
  readonly calls: Array<string>
}

/** An entry as `codex mcp get --json` reports a stdio server (defaults as Codex writes them). */
export const stdioEntry = (
  server: StdioServer,
  over: { readonly enabled?: boolean; readonly env?: Record<string, string>; readonly cwd?: string } = {}
): McpServerEntry => ({
  name: server.name,
  enabled: over.enabled ?? true,
  disabled_reason: null,
  transport: {
    type: "stdio",
    command: server.command,
    args: [...server.args],
    env: over.env ?? null,
    env_vars: [],
    cwd: over.cwd ?? null
  }
})

/**
 * An in-memory Codex CLI for unit tests: registrations live in `state.homes`, so a test can
 * write what a person (or another tool) put in config.toml and read what blctx left there, and
 * make codex missing or failing, which the real one cannot be made to do on demand.
 */
export const makeFakeCodexCli = (over: Partial<FakeCodexState> = {}) => {
  const state: FakeCodexState = { installed: true, homes: new Map(), failing: {}, calls: [], ...over }
  const homeOf = (codexHome: string) => {
    const existing = state.homes.get(codexHome)
    if (existing !== undefined) return existing
    const created = new Map<string, McpServerEntry>()
    state.homes.set(codexHome, created)
    return created
  }
  const call = <A>(
    op: "get" | "add" | "remove",
    codexHome: string,
    args: ReadonlyArray<string>,
    body: () => A
  ): Effect.Effect<A, CodexNotFound | CodexCommandFailed> =>
    Effect.suspend((): Effect.Effect<A, CodexNotFound | CodexCommandFailed> => {
      const command = ["codex", ...args].join(" ")
      state.calls.push(`${codexHome}: ${command}`)
      if (!state.installed) return Effect.fail(new CodexNotFound({ searched: ["/usr/bin", "/bin"] }))
      const reason = state.failing[op]
      if (reason !== undefined) return Effect.fail(new CodexCommandFailed({ command, codexHome, reason }))
      return Effect.sync(body)
    })

  const layer = Layer.succeed(
    CodexCli,
    CodexCli.of({
      locate: Effect.suspend(() =>
        state.installed
          ? Effect.succeed({ path: "/usr/local/bin/codex", version: Option.some("codex-cli 0.0.0-fake") })
          : Effect.fail(new CodexNotFound({ searched: ["/usr/bin", "/bin"] }))
      ),
      getMcpServer: (codexHome, name) =>
        call("get", codexHome, ["mcp", "get", name, "--json"], () => Option.fromNullable(homeOf(codexHome).get(name))),
      addMcpServer: (codexHome, server) =>
        call("add", codexHome, ["mcp", "add", server.name, "--", server.command, ...server.args], () => {
          homeOf(codexHome).set(server.name, stdioEntry(server))
        }),
      removeMcpServer: (codexHome, name) =>
        call("remove", codexHome, ["mcp", "remove", name], () => {
          homeOf(codexHome).delete(name)
        })
    })
  )
  return { state, layer, homeOf }
}
