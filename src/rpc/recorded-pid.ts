import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * The PID blctxd recorded beside its socket (`blctxd.pid` in the state directory), if readable.
 * Effect-free and apart from the words in `not-answering.ts`, which the viewer's browser bundle
 * also carries and which must hold no Node builtins.
 */
export const recordedPidBeside = (socketPath: string): number | undefined => {
  try {
    const text = Fs.readFileSync(NodePath.join(NodePath.dirname(socketPath), "blctxd.pid"), "utf8").trim()
    return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : undefined
  } catch {
    return undefined
  }
}
