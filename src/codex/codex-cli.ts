import { Context, Data, type Effect, type Option, Schema } from "effect"
import { notOnPath } from "../domain/not-on-path.js"

/** What a person runs to get the Codex CLI. */
export const CODEX_INSTALL_COMMAND = "npm install -g @openai/codex"

/**
 * A stdio server as `codex mcp get NAME --json` reports it (`transport`). Fields Codex may add
 * later are ignored; fields an older Codex leaves out take the value that means "not set".
 */
export const StdioTransport = Schema.Struct({
  type: Schema.Literal("stdio"),
  command: Schema.String,
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [], nullable: true }),
  env: Schema.optionalWith(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })), {
    default: () => null
  }),
  env_vars: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [], nullable: true }),
  cwd: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
export type StdioTransport = typeof StdioTransport.Type

/** Any other transport (streamable HTTP, or one a later Codex adds): only its type is read. */
export const OtherTransport = Schema.Struct({ type: Schema.String, url: Schema.optional(Schema.NullOr(Schema.String)) })

/** One `[mcp_servers.NAME]` entry as Codex reports it; extra fields are ignored. */
export const McpServerEntry = Schema.Struct({
  name: Schema.String,
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  disabled_reason: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  transport: Schema.Union(StdioTransport, OtherTransport)
})
export type McpServerEntry = typeof McpServerEntry.Type

/** `codex mcp list --json`: only the names are read. */
export const McpServerNames = Schema.Array(Schema.Struct({ name: Schema.String }))

/** A stdio server to register: `codex mcp add NAME -- COMMAND ARGS...`. */
export interface StdioServer {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** The Codex CLI blctx found on PATH. */
export interface CodexExecutable {
  readonly path: string
  /** What `codex --version` printed, when it answered. */
  readonly version: Option.Option<string>
}

/** No `codex` on PATH. */
export class CodexNotFound extends Data.TaggedError("CodexNotFound")<{
  /** The PATH directories that were searched. */
  readonly searched: ReadonlyArray<string>
}> {
  override get message() {
    return notOnPath("codex", this.searched)
  }
}

/** A `codex` command that did not do its job: a status other than 0, a timeout, or output that is not what it documents. */
export class CodexCommandFailed extends Data.TaggedError("CodexCommandFailed")<{
  /** The command as a person would type it, e.g. `codex mcp get base-layer-context --json`. */
  readonly command: string
  readonly codexHome: string
  /** What codex said (its error, without warnings and backtrace), or why it has no answer. */
  readonly reason: string
}> {
  override get message() {
    return `${this.command} failed (CODEX_HOME ${this.codexHome}): ${this.reason}`
  }
}

export type CodexError = CodexNotFound | CodexCommandFailed

/**
 * What blctx asks of the Codex CLI. Every call names the Codex home it works on, so a
 * registration made under another CODEX_HOME can still be checked and removed there.
 */
export interface CodexCliShape {
  /** Finds `codex` on PATH and asks its version. */
  readonly locate: Effect.Effect<CodexExecutable, CodexNotFound>
  /** `codex mcp get NAME --json`; none when Codex has no server of that name. */
  readonly getMcpServer: (codexHome: string, name: string) => Effect.Effect<Option.Option<McpServerEntry>, CodexError>
  /** `codex mcp add NAME -- COMMAND ARGS...`. Codex replaces an entry of the same name: callers check first. */
  readonly addMcpServer: (codexHome: string, server: StdioServer) => Effect.Effect<void, CodexError>
  /** `codex mcp remove NAME`. */
  readonly removeMcpServer: (codexHome: string, name: string) => Effect.Effect<void, CodexError>
}

export class CodexCli extends Context.Tag("blctx/CodexCli")<CodexCli, CodexCliShape>() {}

const isStdio = Schema.is(StdioTransport)

/** `$CODEX_HOME/config.toml`, where `codex mcp add` writes `[mcp_servers.NAME]`. */
export const codexConfigFile = (codexHome: string) => `${codexHome.replace(/\/+$/, "")}/config.toml`

/** The part of a transport that decides what Codex runs: equal ones start the same server. */
export const sameStdioServer = (entry: McpServerEntry, server: Pick<StdioServer, "command" | "args">): boolean => {
  const stdio = entry.transport
  if (!isStdio(stdio)) return false
  return (
    stdio.command === server.command &&
    stdio.args.length === server.args.length &&
    stdio.args.every((a, i) => a === server.args[i]) &&
    (stdio.env === null || Object.keys(stdio.env).length === 0) &&
    stdio.env_vars.length === 0 &&
    stdio.cwd === null
  )
}

/** One line saying what an entry runs, for details and diagnoses. */
export const describeEntry = (entry: McpServerEntry): string => {
  const stdio = entry.transport
  const state = entry.enabled
    ? "enabled"
    : `disabled${entry.disabled_reason === null ? "" : ` (${entry.disabled_reason})`}`
  if (!isStdio(stdio)) {
    const url = "url" in stdio && typeof stdio.url === "string" ? ` ${stdio.url}` : ""
    return `${stdio.type}${url}, ${state}`
  }
  const extras = [
    stdio.env !== null && Object.keys(stdio.env).length > 0 ? `env ${Object.keys(stdio.env).join(",")}` : "",
    stdio.env_vars.length > 0 ? `env_vars ${stdio.env_vars.length}` : "",
    stdio.cwd !== null ? `cwd ${stdio.cwd}` : ""
  ].filter((s) => s !== "")
  return `stdio: ${[stdio.command, ...stdio.args].join(" ")}${extras.length > 0 ? ` (${extras.join("; ")})` : ""}, ${state}`
}
