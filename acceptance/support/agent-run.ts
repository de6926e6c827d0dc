import { spawn } from "node:child_process"
import { scaled } from "./daemon-harness.js"
import type { RunResult } from "./isolated-home.js"

export type AgentRun = RunResult & { readonly timedOut: boolean }

/**
 * Runs an agent CLI with stdin closed, in its own process group, collecting its output. The group
 * (the CLI and the MCP servers and hooks it starts) is killed if it outlives the bound.
 */
export const runAgentCli = (
  command: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  cwd: string
): Promise<AgentRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { env, cwd, stdio: ["ignore", "pipe", "pipe"], detached: true })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL")
      } catch {
        // already gone
      }
    }, scaled(90_000))
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, timedOut })
    })
  })
