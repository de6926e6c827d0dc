/**
 * How long a history command (search, recent, context, index-status) waits for the daemon's
 * answer before it says the daemon is unavailable. Effect-free: the full CLI and the fast path
 * (`fast-search.ts`) share it.
 */
export const HISTORY_CALL_TIMEOUT_MS = 30_000
