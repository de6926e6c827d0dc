import { Context, Data, type Duration, type Effect } from "effect"

/** A stdio MCP server to launch: a program and its arguments, as Codex would start it. */
export interface McpServerCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Extra environment (Codex's `env` of the entry); the rest is the SDK's default environment. */
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
}

/** What a `tools/call` answered: `isError`, its structured content and its text blocks joined. */
export interface McpToolAnswer {
  readonly isError: boolean
  readonly structured: unknown
  readonly text: string
}

/** An initialised MCP session with one launched server. */
export interface McpProbeSession {
  /** The server's name and version from `initialize`. */
  readonly server: string
  readonly listTools: Effect.Effect<ReadonlyArray<string>, McpProbeFailed>
  readonly callTool: (name: string, args: Record<string, unknown>) => Effect.Effect<McpToolAnswer, McpProbeFailed>
}

/**
 * The server could not be launched or initialised, a request failed, or the bound elapsed.
 * `stderr` is the tail of what the server wrote to stderr (never printed), for the detail.
 */
export class McpProbeFailed extends Data.TaggedError("McpProbeFailed")<{
  readonly phase: "launch" | "initialize" | "tools/list" | "tools/call" | "timeout"
  readonly reason: string
  readonly stderr: string
}> {
  override get message() {
    const said = this.stderr.trim() === "" ? "" : `; its stderr ends: ${this.stderr.trim()}`
    return `${this.phase} failed: ${this.reason}${said}`
  }
}

/**
 * Launches a stdio MCP server, initialises MCP, runs `use` against it and closes it (stdin
 * closed, process ended), all within `timeout`: a server that hangs is a failure, never a hang.
 */
export class McpProbe extends Context.Tag("McpProbe")<
  McpProbe,
  {
    readonly withSession: <A, E>(
      server: McpServerCommand,
      timeout: Duration.Duration,
      use: (session: McpProbeSession) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | McpProbeFailed>
  }
>() {}
