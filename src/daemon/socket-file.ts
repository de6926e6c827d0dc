import { Effect, Option } from "effect"
import { removeVerified } from "../fs/remove-verified.js"
import { SafeFs } from "../fs/safe-fs.js"
import { MAX_SOCKET_PATH_BYTES } from "../rpc/socket-location.js"
import { DaemonStartupError } from "./daemon-errors.js"

/**
 * Makes `path` free for a new socket. Called only while holding the writer lock, so a socket
 * file found there was left by a dead daemon and is replaced. A symbolic link or any other kind
 * of file is never removed: the daemon refuses to start and says why.
 */
export const prepareSocketPath = Effect.fn("Daemon.prepareSocketPath")(function* (path: string) {
  const fs = yield* SafeFs
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    return yield* new DaemonStartupError({
      reason: `socket path ${path} is longer than ${MAX_SOCKET_PATH_BYTES} bytes, the Unix socket limit`,
      remediation: "Set XDG_STATE_HOME to a shorter absolute path and reinstall."
    })
  }
  const fail = (reason: string, remediation: string) => new DaemonStartupError({ reason, remediation })
  const entry = yield* fs
    .lstat(path)
    .pipe(Effect.mapError((e) => fail(`cannot inspect ${path}: ${e.code}`, "Check the state directory's owner.")))
  if (Option.isNone(entry)) return "absent" as const
  switch (entry.value.kind) {
    case "socket":
      // Only the socket just checked: a link or file swapped in since is refused, never removed.
      yield* removeVerified(path, entry.value).pipe(
        Effect.mapError((e) =>
          e._tag === "PathSwapped"
            ? fail(e.message, `Find out what replaced ${path}, then restart the daemon.`)
            : fail(`cannot remove stale socket ${path}: ${e.code}`, `Remove ${path} by hand.`)
        )
      )
      return "replaced-stale" as const
    case "symlink":
      return yield* fail(
        `${path} is a symbolic link; blctxd never follows links for its socket`,
        `Remove ${path}, then restart the daemon.`
      )
    default:
      return yield* fail(
        `${path} exists and is a ${entry.value.kind}, not a socket; it was left untouched`,
        `Move ${path} aside, then restart the daemon.`
      )
  }
})
