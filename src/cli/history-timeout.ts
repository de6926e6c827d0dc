import { CALL_DEADLINE_MS } from "../rpc/not-answering.js"

/**
 * How long a history command (search, recent, context, index-status) waits for the daemon's
 * answer, from connecting to the answer. Effect-free: the full CLI and the fast path
 * (`fast-search.ts`) share it.
 */
export const HISTORY_CALL_TIMEOUT_MS = CALL_DEADLINE_MS
