import { Clock, Duration, Effect, Either, Option, Schema } from "effect"
import {
  CLAUDE_BIN_VARIABLE,
  CLAUDE_INSTALL_COMMAND,
  ClaudeCli,
  type ClaudeError,
  claudeConfigFile,
  describeClaudeEntry,
  sameClaudeServer
} from "../../claude/claude-cli.js"
import {
  CODEX_INSTALL_COMMAND,
  CodexCli,
  type CodexError,
  codexConfigFile,
  describeEntry
} from "../../codex/codex-cli.js"
import type { AgentTarget, StepId } from "../../domain/step-id.js"
import { McpProbe, type McpProbeFailed, type McpProbeSession, type McpServerCommand } from "../../mcp/mcp-probe.js"
import { MCP_TOOLS } from "../../mcp/mcp-server.js"
import type { Manifest } from "../../ownership/manifest.js"
import { ManifestStore } from "../../ownership/manifest-store.js"
import { Paths } from "../../paths/paths.js"
import type { AgentIntegration } from "../agents/agent-integration.js"
import { AGENTS } from "../agents/agents.js"
import { CLAUDE_MCP_NAME } from "../agents/claude.js"
import { CODEX_MCP_NAME } from "../agents/codex.js"
import { fail, type Step, type StepFailure } from "../step.js"

/** Launch, initialise, list and call within this: a cold start plus a daemon round trip, generously. */
export const MCP_PROBE_TIMEOUT = Duration.seconds(30)

/** The tools blctx's server must list, from the server's own definitions. */
export const EXPECTED_TOOLS: ReadonlyArray<string> = MCP_TOOLS.map((t) => t.definition.name)

/** A tool error as blctx's server writes it: one JSON text block `{error: {kind, message, remediation}}`. */
const ToolErrorText = Schema.parseJson(
  Schema.Struct({
    error: Schema.Struct({ kind: Schema.String, message: Schema.String, remediation: Schema.String })
  })
)
const decodeToolError = Schema.decodeUnknownEither(ToolErrorText)

/** A tool's `isError` answer as a failure: its message, and its remediation when it gives one. */
export const toolFailure = (tool: string, text: string, fallback: string): StepFailure => {
  const decoded = decodeToolError(text)
  if (Either.isRight(decoded)) {
    const e = decoded.right.error
    return fail(
      `${tool} answered an error (${e.kind}): ${e.message}`,
      e.remediation.trim() === "" ? fallback : e.remediation
    )
  }
  return fail(`${tool} answered an error: ${text.trim() === "" ? "(no text)" : text.trim().slice(0, 500)}`, fallback)
}

/** The MCP session could not be had or a request failed: what was launched, the phase and the server's stderr. */
export const probeFailure = (server: McpServerCommand, remediation: string) => (e: McpProbeFailed) =>
  fail(
    `blctx's MCP server (${[server.command, ...server.args.slice(0, 1)].join(" ")}) ${e.message}`,
    remediation,
    e._tag
  )

/** Calls a tool and decodes its structured answer; an error answer or an unexpected shape is a failure. */
export const callDecoded = <A, I>(
  session: McpProbeSession,
  server: McpServerCommand,
  tool: string,
  args: Record<string, unknown>,
  schema: Schema.Schema<A, I>,
  remediation: string
): Effect.Effect<A, StepFailure> =>
  Effect.gen(function* () {
    const answer = yield* session.callTool(tool, args).pipe(Effect.mapError(probeFailure(server, remediation)))
    if (answer.isError) return yield* toolFailure(tool, answer.text, remediation)
    const decoded = Schema.decodeUnknownEither(schema)(answer.structured)
    if (Either.isLeft(decoded)) {
      return yield* fail(
        `${tool} answered something blctx does not understand (no valid structured result)`,
        remediation
      )
    }
    return decoded.right
  })

/** The parts of `context_status` the checks read. */
export const IndexStatus = Schema.Struct({
  index_state: Schema.String,
  query_mode: Schema.String,
  query_mode_reason: Schema.NullOr(Schema.String)
})

/** Every tool blctx's server must list, or a failure naming the ones missing. */
export const requireTools = (session: McpProbeSession, server: McpServerCommand, remediation: string) =>
  Effect.gen(function* () {
    const listed = yield* session.listTools.pipe(Effect.mapError(probeFailure(server, remediation)))
    const missing = EXPECTED_TOOLS.filter((t) => !listed.includes(t))
    if (missing.length > 0) {
      return yield* fail(
        `blctx's MCP server (${session.server}) does not list ${missing.join(", ")} (it lists ${listed.length === 0 ? "no tools" : listed.join(", ")})`,
        remediation
      )
    }
    return listed
  })

const REREGISTER = "Run: blctx install codex --step codex_mcp"
const CLAUDE_REREGISTER = "Run: blctx install claude --step claude_mcp"
const RECHECK = "Check the daemon: blctx status --step service_health; then run: blctx status --step mcp_health"

/** Where a target's agent says what it launches for blctx, and how to register it again. */
export interface McpRegistrationSource {
  readonly target: AgentTarget
  readonly reregister: string
  /** The stdio command the agent has registered as base-layer-context. */
  readonly registered: Effect.Effect<McpServerCommand, StepFailure>
}

/** What Codex would launch: the registered stdio entry, enabled (read back as codex_mcp's verify does). */
export const codexMcpSource = Effect.gen(function* () {
  const codex = yield* CodexCli
  const paths = yield* Paths
  const codexHome = paths.codexHome
  const configFile = codexConfigFile(codexHome)

  const fromCodex = (e: CodexError): StepFailure =>
    e._tag === "CodexNotFound"
      ? fail(
          `${e.message}; blctx reads its MCP registration through the Codex CLI`,
          `Install Codex: ${CODEX_INSTALL_COMMAND} (or put codex on PATH), then run: blctx status --step mcp_health`,
          e._tag
        )
      : fail(e.message, `Fix what codex reports in ${codexConfigFile(e.codexHome)}, then run: ${REREGISTER}`, e._tag)

  const registered = Effect.gen(function* () {
    const found = yield* codex.getMcpServer(codexHome, CODEX_MCP_NAME).pipe(Effect.mapError(fromCodex))
    if (Option.isNone(found)) {
      return yield* fail(
        `${CODEX_MCP_NAME} is not registered in ${configFile}, so Codex has no blctx server to start`,
        REREGISTER
      )
    }
    const entry = found.value
    if (!entry.enabled) {
      return yield* fail(
        `${CODEX_MCP_NAME} is disabled in ${configFile}, so Codex does not start it`,
        `Remove \`enabled = false\` from [mcp_servers.${CODEX_MCP_NAME}] in ${configFile}.`
      )
    }
    const t = entry.transport
    if (t.type !== "stdio" || !("command" in t)) {
      return yield* fail(
        `${CODEX_MCP_NAME} in ${configFile} is not a stdio server (${describeEntry(entry)})`,
        REREGISTER
      )
    }
    const server: McpServerCommand = {
      command: t.command,
      args: t.args,
      ...(t.env === null ? {} : { env: t.env }),
      ...(t.cwd === null ? {} : { cwd: t.cwd })
    }
    return server
  })
  const source: McpRegistrationSource = { target: "codex", reregister: REREGISTER, registered }
  return source
})

/**
 * What Claude Code would launch: its user-scope entry, when it runs what blctx recorded. `claude
 * mcp get` prints the arguments joined by spaces, so the exact command is the manifest's record,
 * once Claude reports exactly that.
 */
export const claudeMcpSource = Effect.gen(function* () {
  const claude = yield* ClaudeCli
  const manifests = yield* ManifestStore
  const paths = yield* Paths
  const claudeHome = paths.claudeHome
  const claudeFile = claudeConfigFile(claudeHome, paths.home)

  const fromClaude = (e: ClaudeError): StepFailure =>
    e._tag === "ClaudeNotFound"
      ? fail(
          `${e.message}; blctx reads its MCP registration through Claude Code's CLI`,
          `Install Claude Code: ${CLAUDE_INSTALL_COMMAND} (or put claude on PATH, or set ${CLAUDE_BIN_VARIABLE}), then run: blctx status --step mcp_health`,
          e._tag
        )
      : fail(e.message, `Fix what claude reports about ${claudeFile}, then run: ${CLAUDE_REREGISTER}`, e._tag)

  const registered = Effect.gen(function* () {
    const found = yield* claude.getMcpServer(claudeHome, CLAUDE_MCP_NAME).pipe(Effect.mapError(fromClaude))
    if (Option.isNone(found)) {
      return yield* fail(
        `${CLAUDE_MCP_NAME} is not registered with Claude Code (${claudeFile}), so it has no blctx server to start`,
        CLAUDE_REREGISTER
      )
    }
    const manifest = yield* manifests.read().pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
    const record = Option.getOrUndefined(manifest)?.claude_mcp?.find(
      (r) => r.claude_home === claudeHome && r.name === CLAUDE_MCP_NAME
    )
    if (record === undefined || !sameClaudeServer(found.value, record)) {
      return yield* fail(
        `${CLAUDE_MCP_NAME} in ${claudeFile} does not run what blctx registered (${describeClaudeEntry(found.value)})`,
        CLAUDE_REREGISTER
      )
    }
    const server: McpServerCommand = { command: record.command, args: record.args }
    return server
  })
  const source: McpRegistrationSource = { target: "claude", reregister: CLAUDE_REREGISTER, registered }
  return source
})

/**
 * What an agent would launch, read through its record's own CLI adapter: its entry under blctx's
 * name, when it runs exactly what the manifest recorded (the agent's listing may print the
 * arguments joined by spaces, so the exact command is the record's once the agent reports it).
 */
export const recordedMcpSource = <M>(agent: AgentIntegration<M>) =>
  Effect.gen(function* () {
    const cli = yield* agent.mcp.cli
    const manifests = yield* ManifestStore
    const home = agent.homeOf(yield* Paths)
    const configFile = cli.configFileOf(home)
    const reregister = `Run: blctx install ${agent.target} --step ${agent.steps.mcp}`
    const name = agent.mcp.name

    const registered = Effect.gen(function* () {
      const found = yield* cli.get(home, name, "blctx status --step mcp_health")
      if (Option.isNone(found)) {
        return yield* fail(
          `${name} is not registered with ${agent.name} (${configFile}), so it has no blctx server to start`,
          reregister
        )
      }
      const manifest = yield* manifests.read().pipe(Effect.orElseSucceed(() => Option.none<Manifest>()))
      const record = Option.match(manifest, { onNone: () => [], onSome: agent.mcp.records.read }).find(
        (r) => r.home === home && r.name === name
      )
      if (record === undefined || !found.value.runs(record)) {
        return yield* fail(
          `${name} in ${configFile} does not run what blctx registered (${found.value.description})`,
          reregister
        )
      }
      const server: McpServerCommand = { command: record.command, args: record.args }
      return server
    })
    const source: McpRegistrationSource = { target: agent.target, reregister, registered }
    return source
  })

/**
 * Where mcp_health reads an agent's registration: Codex's and Claude Code's own readers (they
 * predate the record's CLI adapter and keep their exact messages), every other agent's through it.
 */
export const mcpSourceOf = <M>(agent: AgentIntegration<M>) =>
  agent.target === "codex" ? codexMcpSource : agent.target === "claude" ? claudeMcpSource : recordedMcpSource(agent)

/**
 * Launches the exact command each target's agent has registered as `base-layer-context`,
 * initialises MCP over stdio, requires every tool and calls `context_status`. Nothing to
 * install or remove: install is verify, uninstall says so.
 */
export const makeMcpHealthStep = (sources: ReadonlyArray<McpRegistrationSource>) =>
  Effect.gen(function* () {
    const probe = yield* McpProbe

    const checkOne = (source: McpRegistrationSource) =>
      Effect.gen(function* () {
        const server = yield* source.registered
        const remediation = `${RECHECK}; if the server itself fails: ${source.reregister}`
        const t0 = yield* Clock.currentTimeMillis
        const { status, listed, ready } = yield* probe
          .withSession(server, MCP_PROBE_TIMEOUT, (session) =>
            Effect.gen(function* () {
              const listed = yield* requireTools(session, server, remediation)
              const ready = yield* Clock.currentTimeMillis
              const status = yield* callDecoded(session, server, "context_status", {}, IndexStatus, remediation)
              return { status, listed, ready }
            })
          )
          .pipe(Effect.mapError((e) => (e._tag === "McpProbeFailed" ? probeFailure(server, remediation)(e) : e)))
        const t1 = yield* Clock.currentTimeMillis
        const reason = status.query_mode_reason === null ? "" : ` (${status.query_mode_reason})`
        return `${CODEX_MCP_NAME} answered over stdio in ${t1 - t0} ms (${ready - t0} ms to list its ${listed.length} tools, then context_status): index ${status.index_state}, queries ${status.query_mode}${reason}`
      })

    const verify = Effect.fn("McpHealth.verify")(function* () {
      const [only] = sources
      if (sources.length === 1 && only !== undefined) return { detail: yield* checkOne(only) }
      // Each agent's server is its own process: started side by side, they cost one cold start.
      // Every check runs to its end, and the first failure in target order is the one reported.
      const outcomes = yield* Effect.forEach(sources, (source) => Effect.either(checkOne(source)), {
        concurrency: "unbounded"
      })
      const details: Array<string> = []
      for (const [i, outcome] of outcomes.entries()) {
        const target = sources[i]?.target ?? "codex"
        if (Either.isLeft(outcome)) {
          const f = outcome.left
          return yield* fail(`${target}: ${f.detail}`, f.remediation, f.errorTag)
        }
        details.push(`${target}: ${outcome.right}`)
      }
      return { detail: details.join("; ") }
    })

    const step: Step = {
      id: "mcp_health",
      title: "MCP health",
      requires: [...sources.map((s): StepId => AGENTS[s.target].steps.mcp), "service_health"],
      install: () => verify(),
      verify: () => verify(),
      uninstall: () => Effect.succeed({ detail: "nothing to remove: this check installs nothing" })
    }
    return step
  })

/** The check for Codex alone (`blctx install codex`). */
export const mcpHealthStep = Effect.flatMap(codexMcpSource, (source) => makeMcpHealthStep([source]))
