import type { InstallationId } from "../domain/installation-id.js"
import { pidFileIn } from "../paths/daemon-files.js"
import type { ResolvedPaths } from "../paths/paths.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { daemonArgv } from "./daemon-args.js"

/** Everything a service manager needs to run one installation's daemon. */
export interface ServiceSpec {
  readonly installationId: InstallationId
  /** `blctxd-<installation-uuid>` (systemd adds `.service`). */
  readonly name: string
  /** Absolute node binary, its flags and the daemon entry point, then the daemon's arguments. */
  readonly command: ReadonlyArray<string>
  /** Variables the daemon starts with, beside what its manager gives it (`DAEMON_ENVIRONMENT`). */
  readonly environment: Readonly<Record<string, string>>
  readonly daemonEntry: string
  readonly socketPath: string
  readonly stateDir: string
  readonly configDir: string
  readonly pidFile: string
  readonly logFile: string
}

export const serviceName = (id: InstallationId) => `blctxd-${id}`

/**
 * Node flags blctxd runs with. `--optimize-for-size` makes V8 collect before it grows its heap:
 * importing a 200 MiB transcript peaks at ~110-140 MiB instead of ~160-215 MiB, at a few percent of
 * import speed (`npm run bench -- importer` measures both).
 */
export const DAEMON_NODE_FLAGS: ReadonlyArray<string> = ["--optimize-for-size"]

/**
 * Environment blctxd runs with (glibc's malloc; other C libraries ignore both).
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates its own malloc arena (ONNX
 *   Runtime's pool, the query workers, libuv), and each keeps its freed memory. Two arenas took
 *   the daemon with a model of bge-small-en's size from 373 to 297 MiB idle and from 614 to 503
 *   MiB at its indexing peak (`npm run bench -- importer`, same history).
 * - `MALLOC_MMAP_THRESHOLD_=65536`: every allocation of 64 KiB or more gets its own mapping, given
 *   back when freed. Otherwise glibc raises the threshold to 32 MiB once a large block is freed
 *   (loading the model frees several), and later large blocks (ONNX Runtime's tensors, SQLite's
 *   rows) stay in the heap as free space: 100k chunks with a bge-size model, after the same
 *   searches, 516 -> 440 MiB.
 */
export const DAEMON_ENVIRONMENT: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "65536"
}

export const makeServiceSpec = (input: {
  readonly installationId: InstallationId
  readonly paths: ResolvedPaths
  readonly node: string
  readonly daemon: string
}): ServiceSpec => {
  const args = daemonArgv({
    "installation-id": input.installationId,
    "data-home": input.paths.dataHome,
    "config-home": input.paths.configHome,
    "cache-home": input.paths.cacheHome,
    "state-home": input.paths.stateHome
  })
  return {
    installationId: input.installationId,
    name: serviceName(input.installationId),
    command: [input.node, ...DAEMON_NODE_FLAGS, input.daemon, ...args],
    environment: DAEMON_ENVIRONMENT,
    daemonEntry: input.daemon,
    socketPath: socketPathIn(input.paths.stateDir),
    stateDir: input.paths.stateDir,
    configDir: input.paths.configDir,
    pidFile: pidFileIn(input.paths.stateDir),
    logFile: `${input.paths.stateDir}/blctxd.log`
  }
}
