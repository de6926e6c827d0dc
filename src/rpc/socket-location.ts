import * as NodePath from "node:path"

/** The daemon's socket file, in the private (0700) state directory. */
export const DAEMON_SOCKET_NAME = "blctxd.sock"

export const socketPathIn = (stateDir: string) => NodePath.join(stateDir, DAEMON_SOCKET_NAME)

/** The kernel's limit for a Unix socket path (sun_path), minus the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 103
