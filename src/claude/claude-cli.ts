import * as NodePath from "node:path"
import { Context, Data, Option } from "effect"
import type { AgentCliPort, AgentExecutable, AgentStdioServer } from "../domain/agent-cli.js"
import { type CommandNotFoundFields, commandNotFound } from "../domain/not-on-path.js"

/** What a person runs to get Claude Code's CLI. */
export const CLAUDE_INSTALL_COMMAND = "npm install -g @anthropic-ai/claude-code"

/** Names the `claude` executable blctx runs, instead of the first one on PATH. */
export const CLAUDE_BIN_VARIABLE = "BLCTX_CLAUDE_BIN"

/**
 * One MCP server as `claude mcp get NAME` reports it. Claude Code 2.1 prints text, not JSON:
 * `Scope:`, `Status:`, `Type:`, `Command:`, `Args:` (the arguments joined by spaces) and
 * `Environment:` (one `KEY=value` line each); `get` also starts the server and says whether it
 * connected. Fields a later Claude adds are ignored.
 */
export interface ClaudeMcpServer {
  readonly name: string
  /** As printed, e.g. `User config (available in all your projects)`. */
  readonly scope: string
  /** Whether the entry lives in the user configuration (`--scope user`), the one blctx writes. */
  readonly userScope: boolean
  /** As printed, e.g. `✔ Connected` or `✘ Failed to connect`. */
  readonly status: string
  readonly connected: boolean
  /** Why it did not connect, when Claude says (`Issue:`). */
  readonly issue: Option.Option<string>
  /** `stdio`, `http`, `sse`, ... */
  readonly type: string
  /** The stdio command; none for a remote server. */
  readonly command: Option.Option<string>
  /** The arguments as Claude prints them: joined by single spaces. */
  readonly args: string
  /** The environment variable names set for the server. */
  readonly env: ReadonlyArray<string>
  /** A remote server's URL. */
  readonly url: Option.Option<string>
}

/** A stdio server to register: `claude mcp add --scope user NAME -- COMMAND ARGS...`. */
export type ClaudeStdioServer = AgentStdioServer

/** The Claude Code CLI blctx found. */
export type ClaudeExecutable = AgentExecutable

/** No usable `claude`: none on PATH, or BLCTX_CLAUDE_BIN names no executable file. */
export class ClaudeNotFound extends Data.TaggedError("ClaudeNotFound")<CommandNotFoundFields> {
  override get message() {
    return commandNotFound("claude", CLAUDE_BIN_VARIABLE, this.variable, this.searched)
  }
}

/** A `claude` command that did not do its job: a status other than 0, a timeout, or output that is not what it documents. */
export class ClaudeCommandFailed extends Data.TaggedError("ClaudeCommandFailed")<{
  /** The command as a person would type it, e.g. `claude mcp get base-layer-context`. */
  readonly command: string
  readonly claudeHome: string
  /** What claude said, or why it has no answer. */
  readonly reason: string
}> {
  override get message() {
    return `${this.command} failed (Claude configuration ${this.claudeHome}): ${this.reason}`
  }
}

export type ClaudeError = ClaudeNotFound | ClaudeCommandFailed

/**
 * What blctx asks of Claude Code's CLI. Every call names the Claude configuration directory it
 * works on (CLAUDE_CONFIG_DIR, default `~/.claude`), so a registration made under another one
 * can still be checked and removed there. `get` is `claude mcp get NAME`; `add` is refused for a
 * name that exists, so callers check first.
 */
export type ClaudeCliShape = AgentCliPort<ClaudeMcpServer, ClaudeNotFound, ClaudeError>

export class ClaudeCli extends Context.Tag("blctx/ClaudeCli")<ClaudeCli, ClaudeCliShape>() {}

/**
 * The file Claude Code keeps user-scope MCP servers in: `~/.claude.json` for the default
 * configuration directory, `$CLAUDE_CONFIG_DIR/.claude.json` otherwise.
 */
export const claudeConfigFile = (claudeHome: string, home: string) =>
  NodePath.resolve(claudeHome) === NodePath.join(home, ".claude")
    ? NodePath.join(home, ".claude.json")
    : NodePath.join(claudeHome, ".claude.json")

/** Reads `claude mcp get NAME`'s text; none when it does not describe a server. */
export const parseMcpGet = (text: string): Option.Option<ClaudeMcpServer> => {
  const lines = text.replaceAll("\r", "").split("\n")
  const head = lines.findIndex((l) => /^\S.*:$/.test(l))
  if (head < 0) return Option.none()
  const name = (lines[head] ?? "").slice(0, -1)
  const fields = new Map<string, string>()
  const env: Array<string> = []
  let inEnvironment = false
  for (const line of lines.slice(head + 1)) {
    if (line.trim() === "") break
    const field = /^ {2}(\S[^:]*):\s?(.*)$/.exec(line)
    if (field !== null && !line.startsWith("    ")) {
      const key = field[1] ?? ""
      fields.set(key, (field[2] ?? "").trim())
      inEnvironment = key === "Environment"
      continue
    }
    if (inEnvironment) {
      const variable = line.trim()
      const eq = variable.indexOf("=")
      env.push(eq < 0 ? variable : variable.slice(0, eq))
    }
  }
  if (!fields.has("Type") && !fields.has("Command") && !fields.has("URL")) return Option.none()
  const scope = fields.get("Scope") ?? ""
  const status = fields.get("Status") ?? ""
  return Option.some({
    name,
    scope,
    userScope: scope.startsWith("User"),
    status,
    connected: /\bconnected\b/i.test(status) && !/fail|not/i.test(status),
    issue: Option.fromNullable(fields.get("Issue")),
    type: fields.get("Type") ?? "stdio",
    command: Option.fromNullable(fields.get("Command")),
    args: fields.get("Args") ?? "",
    env,
    url: Option.fromNullable(fields.get("URL"))
  })
}

/** Whether an entry runs exactly this stdio command, with no environment of its own, at user scope. */
export const sameClaudeServer = (
  entry: ClaudeMcpServer,
  server: Pick<ClaudeStdioServer, "command" | "args">
): boolean =>
  entry.userScope &&
  entry.type === "stdio" &&
  Option.contains(entry.command, server.command) &&
  entry.args === server.args.join(" ") &&
  entry.env.length === 0

/** One line saying what an entry runs, for details and diagnoses. */
export const describeClaudeEntry = (entry: ClaudeMcpServer): string => {
  const what = Option.match(entry.command, {
    onNone: () => `${entry.type}${Option.match(entry.url, { onNone: () => "", onSome: (u) => ` ${u}` })}`,
    onSome: (c) => `${entry.type}: ${[c, entry.args].filter((s) => s !== "").join(" ")}`
  })
  const env = entry.env.length > 0 ? ` (env ${entry.env.join(",")})` : ""
  const scope = entry.userScope ? "" : `, ${entry.scope || "unknown scope"}`
  return `${what}${env}${scope}`
}
