/** Flags that mean the same for every command and may appear anywhere on the command line. */
export interface GlobalFlags {
  readonly json: boolean
  readonly noColor: boolean
}

const GLOBAL = new Map<string, keyof GlobalFlags>([
  ["--json", "json"],
  ["--no-color", "noColor"]
])

/**
 * Takes `--json` and `--no-color` out of the arguments wherever they stand (before the command
 * or after its arguments), so `blctx --json status` and `blctx status --json` mean the same.
 * Everything after a `--` separator is left alone.
 */
export const extractGlobalFlags = (args: ReadonlyArray<string>): { flags: GlobalFlags; rest: Array<string> } => {
  const flags = { json: false, noColor: false }
  const rest: Array<string> = []
  let passthrough = false
  for (const arg of args) {
    const key = passthrough ? undefined : GLOBAL.get(arg)
    if (key !== undefined) flags[key] = true
    else rest.push(arg)
    if (arg === "--") passthrough = true
  }
  return { flags, rest }
}
