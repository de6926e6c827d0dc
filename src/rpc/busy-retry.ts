/**
 * How a client asks a busy daemon again (`DaemonBusy`, src/daemon/admission.ts): after a short
 * pause that grows by a factor each time and is jittered, so a burst of refused callers does not
 * come back in step, capped at a second. Declared here without `effect`, because the search fast
 * path (src/cli/fast-search.ts) follows it as well as the RPC client's Schedule (src/rpc/client.ts).
 */
export const BUSY_RETRY = {
  firstPauseMs: 50,
  factor: 1.6,
  maxPauseMs: 1_000
} as const

/** The tag a refused read's failure carries on the wire. */
export const DAEMON_BUSY_TAG = "DaemonBusy"

/**
 * The pause before retry number `attempt` (0 for the first), as effect's `Schedule.jittered`
 * spreads it (between 0.8 and 1.2 times the pause) and then capped.
 */
export const busyPauseMs = (attempt: number, random: () => number = Math.random): number =>
  Math.min(BUSY_RETRY.firstPauseMs * BUSY_RETRY.factor ** attempt * (0.8 + 0.4 * random()), BUSY_RETRY.maxPauseMs)
