import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"

/** Small helpers every benchmark uses to print figures the same way. */

export const percentile = (sortedMs: ReadonlyArray<number>, p: number): number => {
  if (sortedMs.length === 0) return Number.NaN
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1))
  return sortedMs[index] ?? Number.NaN
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

export const line = (name: string, value: string) => console.log(`  ${name.padEnd(44)} ${value}`)

export const section = (title: string) => console.log(`\n## ${title}`)

/** Times `f` `n` times and returns the sorted durations in milliseconds. */
export const timeMany = async (n: number, f: () => Promise<unknown>): Promise<Array<number>> => {
  const out: Array<number> = []
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint()
    await f()
    out.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return out.sort((a, b) => a - b)
}

/** Resident memory of a process, from /proc (Linux). */
export const rssOf = (pid: number): number => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0")
  return kb * 1024
}

/** A throwaway HOME for a benchmark, with every XDG and Codex location under it. */
export const benchHome = (prefix: string) => {
  const home = mkdtempSync(NodePath.join(tmpdir(), prefix))
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: "",
    XDG_STATE_HOME: "",
    XDG_CONFIG_HOME: "",
    XDG_CACHE_HOME: "",
    CODEX_HOME: "",
    BLCTX_SERVICE_MANAGER: "detached"
  }
  return {
    home,
    env,
    socketPath: NodePath.join(home, ".local", "state", "blctx", "blctxd.sock"),
    dispose: () => rmSync(home, { recursive: true, force: true })
  }
}
