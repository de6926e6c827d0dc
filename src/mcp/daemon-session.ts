import { Context, Duration, Effect } from "effect"
import type { BlctxClient } from "../rpc/client.js"
import { type DaemonBusy, type DaemonUnavailable, daemonBusy } from "../rpc/errors.js"

/**
 * The MCP server's one way to its daemon: a protocol session for one tool call. The live layer
 * (`programs/mcp.ts`) is `withDaemon`, which starts a daemon that stopped (the detached
 * supervisor has nobody else to restart it) but never one that was uninstalled; tests give a fake.
 */
export class DaemonSession extends Context.Tag("blctx/mcp/DaemonSession")<
  DaemonSession,
  {
    readonly use: <A, E>(
      use: (client: BlctxClient) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | DaemonUnavailable | DaemonBusy>
  }
>() {}

/** Daemon sessions one MCP server holds at once; the calls beyond them wait their turn. */
export const MAX_DAEMON_SESSIONS = 8

/** How long a tool call waits for its turn before it answers busy. */
export const TURN_WAIT = Duration.seconds(5)

/**
 * Runs `session` once one of `permits` is free, or fails with DaemonBusy when none frees within
 * `wait`. A burst of tool calls (an agent fanning out) then reaches the daemon a few at a time:
 * each call's deadline starts with its own turn, instead of hundreds of connections all timing
 * out against each other. Once a call has its turn it is never cut short here.
 */
export const inTurn =
  (permits: Effect.Semaphore, wait: Duration.DurationInput) =>
  <A, E, R>(session: Effect.Effect<A, E, R>): Effect.Effect<A, E | DaemonBusy, R> =>
    Effect.suspend(() => {
      let started = false
      const gated = permits.withPermits(1)(
        Effect.zipRight(
          Effect.sync(() => {
            started = true
          }),
          session
        )
      )
      const noTurn = Effect.sleep(wait).pipe(
        Effect.zipRight(
          Effect.suspend(() =>
            started ? Effect.never : Effect.fail(daemonBusy(MAX_DAEMON_SESSIONS, MAX_DAEMON_SESSIONS))
          )
        )
      )
      return Effect.raceFirst(gated, noTurn)
    })
