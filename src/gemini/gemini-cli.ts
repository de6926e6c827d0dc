import * as NodePath from "node:path"
import { Context, Data } from "effect"
import type { AgentCliPort, AgentExecutable, AgentStdioServer } from "../domain/agent-cli.js"
import { type CommandNotFoundFields, commandNotFound } from "../domain/not-on-path.js"

/** What a person runs to get Gemini CLI. */
export const GEMINI_INSTALL_COMMAND = "npm install -g @google/gemini-cli"

/** Names the `gemini` executable blctx runs, instead of the first one on PATH. */
export const GEMINI_BIN_VARIABLE = "BLCTX_GEMINI_BIN"

/**
 * One MCP server as `gemini mcp list` reports it (Gemini CLI 0.61 prints text on stderr, one line
 * a server: `✓ NAME: COMMAND ARGS (stdio) - Connected`). `list` starts every server and says
 * whether it connected; the arguments are joined by single spaces.
 */
export interface GeminiMcpServer {
  readonly name: string
  /** `Connected`, `Disconnected`, `Disabled`, `Blocked`, `Connecting`. */
  readonly status: string
  readonly connected: boolean
  /** `stdio`, `sse` or `http`. */
  readonly transport: string
  /** The command and its arguments (stdio), or the URL. */
  readonly target: string
}

/** A stdio server to register: `gemini mcp add --scope user NAME COMMAND ARGS...`. */
export type GeminiStdioServer = AgentStdioServer

/** The Gemini CLI blctx found. */
export type GeminiExecutable = AgentExecutable

/** No usable `gemini`: none on PATH, or BLCTX_GEMINI_BIN names no executable file. */
export class GeminiNotFound extends Data.TaggedError("GeminiNotFound")<CommandNotFoundFields> {
  override get message() {
    return commandNotFound("gemini", GEMINI_BIN_VARIABLE, this.variable, this.searched)
  }
}

/** A `gemini` command that did not do its job: a status other than 0, a timeout, or output it does not document. */
export class GeminiCommandFailed extends Data.TaggedError("GeminiCommandFailed")<{
  readonly command: string
  readonly geminiHome: string
  readonly reason: string
}> {
  override get message() {
    return `${this.command} failed (Gemini CLI folder ${this.geminiHome}): ${this.reason}`
  }
}

export type GeminiError = GeminiNotFound | GeminiCommandFailed

/**
 * What blctx asks of Gemini CLI. Every call names the Gemini folder it works on
 * (`$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`), so a registration made under another one can
 * still be checked and removed there. `get` reads `gemini mcp list` (which starts the servers);
 * `add` replaces an entry of that name.
 */
export type GeminiCliShape = AgentCliPort<GeminiMcpServer, GeminiNotFound, GeminiError>

export class GeminiCli extends Context.Tag("blctx/GeminiCli")<GeminiCli, GeminiCliShape>() {}

/** The user settings file (MCP servers and hooks) in a Gemini folder. */
export const geminiSettingsFile = (geminiHome: string) => NodePath.join(geminiHome, "settings.json")

/** `GEMINI_CLI_HOME` for a Gemini folder: the CLI keeps its folder as `.gemini` under it. */
export const geminiCliHome = (geminiHome: string) => NodePath.dirname(NodePath.resolve(geminiHome))

const SERVER_LINE = /^\S+\s+(.+?): (.*) \((stdio|sse|http)\) - (\S+)\s*$/

/** Reads `gemini mcp list`'s text: every server line, others ignored. */
export const parseMcpList = (text: string): ReadonlyArray<GeminiMcpServer> =>
  text
    .replaceAll("\r", "")
    .split("\n")
    .flatMap((line) => {
      const m = SERVER_LINE.exec(line.trim())
      if (m === null) return []
      const status = m[4] ?? ""
      return [
        {
          name: (m[1] ?? "").replace(/ \(from [^)]*\)$/, ""),
          status,
          connected: status === "Connected",
          transport: m[3] ?? "",
          target: m[2] ?? ""
        }
      ]
    })

/** Whether an entry runs exactly this stdio command (Gemini prints the arguments joined by spaces). */
export const sameGeminiServer = (
  entry: GeminiMcpServer,
  server: Pick<GeminiStdioServer, "command" | "args">
): boolean => entry.transport === "stdio" && entry.target === [server.command, ...server.args].join(" ")

/** One line saying what an entry runs. */
export const describeGeminiEntry = (entry: GeminiMcpServer): string => `${entry.transport}: ${entry.target}`
