import type { Effect, Option } from "effect"

/** An agent CLI blctx found. */
export interface AgentExecutable {
  readonly path: string
  /** What `CLI --version` printed, when it answered. */
  readonly version: Option.Option<string>
  /** How it was found: its `BLCTX_*_BIN` variable, or PATH. */
  readonly source: "variable" | "path"
}

/** A stdio server to register: `CLI mcp add --scope user NAME ... COMMAND ARGS...`. */
export interface AgentStdioServer {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/**
 * What blctx asks of an agent CLI that keeps its MCP registrations itself (`claude mcp`,
 * `gemini mcp`), always at user scope. Every call names the agent home it works on, so a
 * registration made under another one can still be checked and removed there.
 */
export interface AgentCliPort<Entry, NotFound, E> {
  /** Finds the executable (its `BLCTX_*_BIN` variable, else PATH) and asks its version. */
  readonly locate: Effect.Effect<AgentExecutable, NotFound>
  /** The entry of that name as the CLI reports it (which starts the server); none when it has none. */
  readonly getMcpServer: (home: string, name: string) => Effect.Effect<Option.Option<Entry>, E>
  readonly addMcpServer: (home: string, server: AgentStdioServer) => Effect.Effect<void, E>
  readonly removeMcpServer: (home: string, name: string) => Effect.Effect<void, E>
}
