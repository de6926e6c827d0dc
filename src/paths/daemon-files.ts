import * as NodePath from "node:path"

/** The writer lock file: held (never written) by the daemon for its whole life. */
export const lockFileIn = (dataDir: string) => NodePath.join(dataDir, "writer.lock")
/** The running daemon's PID, written once it holds the lock. */
export const pidFileIn = (stateDir: string) => NodePath.join(stateDir, "blctxd.pid")
