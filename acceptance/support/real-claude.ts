import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { runAgentCli } from "./agent-run.js"
import type { DaemonHome } from "./daemon-harness.js"

/**
 * Test support: the real Claude Code CLI (`@anthropic-ai/claude-code`, installed apart in
 * test-tools/ by `npm run test:tools`), run offline in a test home against a scripted loopback
 * Anthropic API (support/scripted-anthropic-server.ts). Its configuration folder is the home's
 * `~/.claude` (no CLAUDE_CONFIG_DIR), so blctx and Claude Code agree on it.
 */
const root = NodePath.resolve(import.meta.dirname, "..", "..")
export const claudeBin = NodePath.join(root, "test-tools", "node_modules", ".bin", "claude")
/** The CLI, or a failure that says how to get it: CI installs test-tools, so a missing CLI never skips. */
export const requireClaude = () => {
  if (!Fs.existsSync(claudeBin)) throw new Error(`${claudeBin} is missing: run npm run test:tools`)
  return claudeBin
}

/** Claude Code's folder in a test home. */
export const claudeHomeOf = (h: DaemonHome) => NodePath.join(h.home, ".claude")
export const claudeSettingsOf = (h: DaemonHome) => NodePath.join(claudeHomeOf(h), "settings.json")

/**
 * Runs `claude` with this home's environment, the scripted API, stdin closed, and nothing else
 * reaching the network. Its process group (Claude Code and the hooks it starts) is killed if it
 * outlives the bound.
 */
export const runClaude = (
  h: DaemonHome,
  baseUrl: string,
  args: ReadonlyArray<string>,
  cwd = h.home,
  env: Readonly<Record<string, string>> = {}
) =>
  runAgentCli(
    requireClaude(),
    [...args],
    {
      ...h.env,
      ...env,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: "scripted-anthropic-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1"
    },
    cwd
  )

type HooksCommand = "install" | "status" | "uninstall"

/** The blctx command line for one command over the claude_hooks step. */
const cliArgs: Readonly<Record<HooksCommand, ReadonlyArray<string>>> = {
  install: ["install", "claude", "--step", "claude_hooks", "--hooks", "--json"],
  status: ["status", "claude", "--step", "claude_hooks", "--json"],
  // Uninstall takes the whole target: the test ends with it.
  uninstall: ["uninstall", "claude", "--json"]
}

/** Runs one command over blctx's Claude Code hooks with the built CLI, and reads its claude_hooks check. */
export const claudeHooks = async (
  h: DaemonHome,
  command: HooksCommand
): Promise<{ readonly passed: boolean; readonly detail: string }> => {
  const run = await h.blctx(cliArgs[command])
  let check: { status: string; detail: string } | undefined
  try {
    const report = JSON.parse(run.stdout) as { checks?: ReadonlyArray<{ id: string; status: string; detail: string }> }
    check = report.checks?.find((c) => c.id === "claude_hooks")
  } catch {
    check = undefined
  }
  return check === undefined
    ? { passed: false, detail: `no claude_hooks check in: ${run.stdout}${run.stderr}` }
    : { passed: check.status === "passed", detail: check.detail }
}
