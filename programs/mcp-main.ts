// blctx-mcp's full server, loaded by its front (programs/mcp.ts) once the front has answered the
// handshake: a thin client of blctxd.
import * as NodePath from "node:path"
import type { Readable, Writable } from "node:stream"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Context, Duration, Effect, Either, Exit, Layer, Logger } from "effect"
import { DaemonConnectorLive } from "../layers/daemon-connector-live.js"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { withDaemon } from "../src/daemon/ensure-daemon.js"
import { DaemonSession, inTurn, MAX_DAEMON_SESSIONS, TURN_WAIT } from "../src/mcp/daemon-session.js"
import { MCP_USAGE, type McpArgs, McpConfig, parseMcpArgv } from "../src/mcp/mcp-config.js"
import { serveMcp } from "../src/mcp/mcp-server.js"
import { BoundedStdioTransport } from "../src/mcp/stdio-transport.js"
import { ManifestStore } from "../src/ownership/manifest-store.js"
import { Paths } from "../src/paths/paths.js"
import { ProgramPaths } from "../src/paths/program-paths.js"
import type { DaemonConnector } from "../src/rpc/daemon-connector.js"

/**
 * Each protocol call is bounded: a slow daemon is an error, never a hung tool call. Reaching the
 * daemon (its first Ping) is bounded by the 5 s call deadline; a call may take this long (a
 * forget, a write behind an import) before it is given up.
 */
const CALL_TIMEOUT = Duration.seconds(30)

export interface McpSession {
  /** What the client sends (after the front, the lines it handed over). */
  readonly input: Readable
  /** The JSON-RPC stream to the client. */
  readonly output: Writable
  /** Where the package is installed: the daemon it may start is found there, as the CLI finds it. */
  readonly packageRoot: string
}

/**
 * One `withDaemon` session per tool call: a daemon that stopped is started again through the
 * machine's service manager (nothing else restarts a detached one), an uninstalled one is not.
 * The service-manager modules (process table, systemctl, the start lock's SQLite addon) are
 * loaded by the first call, not at startup. A few sessions run at once (`inTurn`); a burst of
 * calls waits its turn, and a call that gets none in time answers busy.
 */
const DaemonSessionLive = Layer.scoped(
  DaemonSession,
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const services = yield* Effect.context<ManifestStore | Paths | ProgramPaths | DaemonConnector>()
    const turn = inTurn(yield* Effect.makeSemaphore(MAX_DAEMON_SESSIONS), TURN_WAIT)
    const manager = yield* Effect.cached(
      Effect.promise(() => import("../layers/supervisor-selection.js")).pipe(
        Effect.flatMap(({ ServiceManagerLive }) => Layer.buildWithScope(ServiceManagerLive, scope))
      )
    )
    return DaemonSession.of({
      use: (use) =>
        Effect.flatMap(manager, (managerServices) =>
          withDaemon(CALL_TIMEOUT, use).pipe(Effect.provide(Context.merge(services, managerServices)), turn)
        )
    })
  })
)

/** Everything a session runs on: the installation named by `args`, the package at `packageRoot`. */
const mainLayer = (args: McpArgs, packageRoot: string) => {
  const ProgramPathsLive = Layer.succeed(ProgramPaths, {
    node: process.execPath,
    cli: NodePath.join(packageRoot, "dist", "bin", "blctx.mjs"),
    daemon: NodePath.join(packageRoot, "dist", "programs", "daemon.js"),
    mcp: NodePath.join(packageRoot, "dist", "bin", "blctx-mcp.mjs"),
    hook: NodePath.join(packageRoot, "dist", "bin", "blctx-hook.cjs"),
    skill: NodePath.join(packageRoot, "skills", "base-layer-context", "SKILL.md")
  })
  // The installation's files come from the registered arguments, never from the agent's environment.
  const PathsLive = Paths.layerFrom({
    home: process.env.HOME?.startsWith("/") === true ? process.env.HOME : packageRoot,
    XDG_DATA_HOME: args["data-home"],
    XDG_CONFIG_HOME: args["config-home"],
    XDG_CACHE_HOME: args["cache-home"],
    XDG_STATE_HOME: args["state-home"]
  })
  return DaemonSessionLive.pipe(
    Layer.provideMerge(Layer.mergeAll(ManifestStore.Default, ProgramPathsLive, DaemonConnectorLive)),
    Layer.provideMerge(Layer.mergeAll(PathsLive, NodeSafeFsLive, Layer.succeed(McpConfig, args))),
    // Diagnostics are logfmt lines on stderr (the agent keeps them in its MCP server log).
    Layer.provideMerge(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)))
  )
}

/** The client closing its end of `input` ends the session (MCP's stdio shutdown). */
const closed = (input: Readable) =>
  Effect.async<void>((resume) => {
    const done = () => resume(Effect.void)
    input.once("end", done)
    input.once("close", done)
    return Effect.sync(() => {
      input.off("end", done)
      input.off("close", done)
    })
  })

/** Serves the session until the client closes its input; the process exits with it. */
export const serveMcpSession = ({ input, output, packageRoot }: McpSession): void => {
  const parsed = parseMcpArgv(process.argv.slice(2))
  if (Either.isLeft(parsed)) {
    process.stderr.write(
      `${JSON.stringify({ level: "ERROR", message: "blctx-mcp: invalid arguments", reason: parsed.left, usage: MCP_USAGE })}\n`
    )
    process.exit(2)
  }
  // Messages are bounded (MAX_MCP_MESSAGE_BYTES); an oversized or malformed one is answered with a
  // JSON-RPC error and the session goes on.
  serveMcp(new BoundedStdioTransport(input, output), closed(input)).pipe(
    Effect.provide(mainLayer(parsed.right, packageRoot)),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      // The pretty logger writes to stdout; the logger above writes to stderr.
      disablePrettyLogger: true,
      // Exit once the session is over, whatever handle (an idle socket, a timer) is still open.
      teardown: (exit) => process.exit(Exit.isSuccess(exit) || Exit.isInterrupted(exit) ? 0 : 1)
    })
  )
}
