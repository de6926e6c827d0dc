import { Duration } from "effect"

/**
 * How long blctxd may take to start and to stop, declared once. The daemon bounds its own startup
 * (checks, lock, database, query workers, socket) and exits with a startup error past it; every
 * supervisor (systemd's TimeoutStartSec, launchd, the detached launcher) waits longer, leaving
 * room for Node to load the daemon on a busy machine, so the daemon's own error is what a person
 * reads. Both are bounds for a hang, not targets: a loaded two-core machine has taken over 10 s
 * to start the query workers' threads.
 */
export const DAEMON_STARTUP_LIMIT = Duration.seconds(20)
export const SUPERVISOR_START_WAIT = Duration.seconds(30)

/** Graceful shutdown: the running job stops at its last checkpoint; the rest is replayed. */
export const SHUTDOWN_LIMIT = Duration.seconds(5)
