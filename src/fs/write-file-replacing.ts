import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"

/**
 * Writes `text` to `path` through a fresh temp file beside it, then renames it over `path`. The
 * temp name is unpredictable and created exclusively (`wx`: a link planted at that name is never
 * followed), and the rename replaces whatever is at `path`, a link included, without following
 * it. Synchronous and effect-free, for the service layers' small files.
 */
export const writeFileReplacing = (path: string, text: string, mode = 0o600) => {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
  Fs.writeFileSync(temp, text, { flag: "wx", mode })
  try {
    Fs.renameSync(temp, path)
  } catch (error) {
    Fs.rmSync(temp, { force: true })
    throw error
  }
}
