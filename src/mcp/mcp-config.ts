import { Context, type Either } from "effect"
import { type DaemonArgs, parseDaemonArgv } from "../service/daemon-args.js"

/**
 * The installation the MCP server answers for: its command line, as `codex mcp add` registered it.
 * It is exactly the daemon's (the installation id and the four XDG roots, nothing else), so both
 * programs resolve one installation the same way and neither reads XDG variables from an
 * environment the agent chose.
 */
export type McpArgs = DaemonArgs

export class McpConfig extends Context.Tag("blctx/McpConfig")<McpConfig, McpArgs>() {}

/** Decodes `--flag value` pairs strictly: unknown, repeated or missing flags are refused. */
export const parseMcpArgv = (argv: ReadonlyArray<string>): Either.Either<McpArgs, string> => parseDaemonArgv(argv)

export const MCP_USAGE =
  "blctx-mcp --installation-id UUID --data-home DIR --config-home DIR --cache-home DIR --state-home DIR"
