import { CALL_DEADLINE_MS } from "../rpc/not-answering.js"

/**
 * How long a history command (search, recent, context, index-status) waits for the daemon's
 * answer, from connecting to the answer. Effect-free: the full CLI and the fast path
 * (`fast-search.ts`) share it.
 */
export const HISTORY_CALL_TIMEOUT_MS = CALL_DEADLINE_MS

/** A daemon that is slow to take the first question still gets this long. */
const MIN_REACH_MS = 1_000

/**
 * What is left of the command's deadline, counted from the start of the process (the clock of
 * `performance.now()`), not from the call: loading the CLI takes part of the 5 s a person waits,
 * so a silent daemon is reported about 5 s after the command started, not 5 s after it loaded.
 */
export const remainingOfCommandDeadline = (): number =>
  Math.max(MIN_REACH_MS, Math.round(HISTORY_CALL_TIMEOUT_MS - performance.now()))
