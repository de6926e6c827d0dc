import * as NodePath from "node:path"

/**
 * The folder npm's script runner (@npmcli/run-script) puts last among its own, right before the
 * PATH it was given.
 */
const NODE_GYP_BIN = NodePath.join("@npmcli", "run-script", "lib", "node-gyp-bin")

/**
 * The PATH the person had when `npx blctx` (npm exec) started blctx, or `undefined` when npm exec
 * did not start it. npm exec puts its own folders first: the node_modules/.bin of the working
 * directory and of every folder above it, then its node-gyp-bin. blctx finds the agents' CLIs
 * (codex, claude) on PATH and hands PATH to the daemon it starts, so under npx a codex a project
 * holds in node_modules (a dev dependency, say) would stand in for the person's own, and
 * `npx blctx` would not do what `blctx` does. Effect-free: `blctx` reads it before anything loads.
 */
export const pathBeforeNpmExec = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (env.npm_command !== "exec" || env.PATH === undefined) return undefined
  const entries = env.PATH.split(NodePath.delimiter)
  const last = entries.findIndex((entry) => entry.endsWith(NODE_GYP_BIN))
  return last === -1 ? undefined : entries.slice(last + 1).join(NodePath.delimiter)
}
