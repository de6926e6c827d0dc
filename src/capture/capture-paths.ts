import * as NodePath from "node:path"

/**
 * Where captures live: a store of the hooks' own beside the database (never the database: an
 * import holds its write lock for a whole file, and a hook must never wait behind one).
 * `<dataDir>/capture/spool/` holds one file per captured event until the daemon drains it;
 * `<dataDir>/capture/bindings/` maps (agent home, event session id) to blctx's own binding.
 * Both 0700, files 0600. Must not import `effect` (the hook handler's start-up budget).
 */
export const captureDirIn = (dataDir: string) => NodePath.join(dataDir, "capture")
export const spoolDirIn = (dataDir: string) => NodePath.join(captureDirIn(dataDir), "spool")
export const bindingsDirIn = (dataDir: string) => NodePath.join(captureDirIn(dataDir), "bindings")
