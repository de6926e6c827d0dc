import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Option } from "effect"

/** A regular file this user may execute (a link is followed). */
export const isExecutableFile = (path: string) => {
  try {
    if (!Fs.statSync(path).isFile()) return false
    Fs.accessSync(path, Fs.constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The first executable `name` in the absolute directories of PATH. Empty and relative entries
 * (which mean "the current directory") are skipped: an installer never runs a program that
 * depends on where it was started.
 */
export const findOnPath = (pathVariable: string, name: string) => {
  const searched = pathVariable.split(NodePath.delimiter).filter((d) => d !== "" && NodePath.isAbsolute(d))
  const found = searched.map((d) => NodePath.join(d, name)).find(isExecutableFile)
  return { found: Option.fromNullable(found), searched }
}
