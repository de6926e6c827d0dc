import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { checkOf, type DaemonHome, makeDaemonHome, scaled } from "./support/daemon-harness.js"
import { claudeHomeOf, claudeSettingsOf, requireClaude } from "./support/real-claude.js"

/**
 * blctx runs `claude mcp add/get` itself (install, status), and Claude Code fires its SessionStart
 * and SessionEnd hooks for those commands too: with blctx's hooks installed, they must capture
 * nothing. And `uninstall --purge` removes what the hooks wrote (bindings, spooled events), which
 * no manifest update records.
 */
let home: DaemonHome | undefined
afterEach(() => {
  home?.dispose()
  home = undefined
})

/** Every file below a folder, or none when it is missing. */
const filesUnder = (dir: string): ReadonlyArray<string> =>
  Fs.existsSync(dir)
    ? Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => NodePath.join(e.parentPath, e.name))
    : []

/** The blctx SessionStart command Claude Code would run, from the settings blctx wrote. */
const sessionStartCommand = (h: DaemonHome) => {
  const settings = JSON.parse(Fs.readFileSync(claudeSettingsOf(h), "utf8")) as {
    hooks: Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>>
  }
  const command = settings.hooks.SessionStart?.flatMap((g) => g.hooks.map((x) => x.command)).find((c) =>
    c.includes("blctx-hook")
  )
  if (command === undefined) throw new Error(`no blctx SessionStart hook in ${JSON.stringify(settings)}`)
  return command
}

describe("the agent CLIs blctx runs itself", () => {
  it(
    "status asks claude once; claude mcp add/get under install and status capture nothing; purge removes what a real session captured",
    async () => {
      const h = makeDaemonHome("detached")
      home = h
      // The real claude behind a wrapper that counts what blctx asks it.
      const calls = NodePath.join(h.home, "claude-calls.log")
      const wrapper = NodePath.join(h.home, "claude")
      Fs.writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${requireClaude()}' "$@"\n`, { mode: 0o700 })
      const env = { BLCTX_CLAUDE_BIN: wrapper }
      const mcpGets = () =>
        Fs.existsSync(calls)
          ? Fs.readFileSync(calls, "utf8")
              .split("\n")
              .filter((l) => l.startsWith("mcp get")).length
          : 0
      Fs.mkdirSync(claudeHomeOf(h), { recursive: true, mode: 0o700 })
      const hooks = await h.blctx(["install", "claude", "--step", "claude_hooks", "--hooks", "--json"], { env })
      expect(hooks.code, hooks.stdout + hooks.stderr).toBe(0)

      // Both run claude (mcp add, mcp get), which fires the SessionStart and SessionEnd hooks just installed.
      const register = await h.blctx(["install", "claude", "--step", "claude_mcp", "--json"], { env })
      expect(register.code, register.stdout + register.stderr).toBe(0)
      const service = await h.blctx(["install", "claude", "--step", "service_health", "--json"], { env })
      expect(service.code, service.stdout + service.stderr).toBe(0)
      // claude_mcp and mcp_health both need Claude's view of the registration: one `claude mcp get` serves both.
      const before = mcpGets()
      const status = await h.blctx(["status", "claude", "--json"], { env })
      for (const id of ["claude_mcp", "mcp_health"])
        expect(checkOf(status.stdout, id).status, status.stdout).toBe("passed")
      expect(mcpGets() - before).toBe(1)
      const capture = NodePath.join(h.xdg.data, "blctx", "capture")
      expect(filesUnder(capture)).toEqual([])

      // A person's session (the same hook command, without blctx's variable) is captured.
      const session = spawnSync("sh", ["-c", sessionStartCommand(h)], {
        input: JSON.stringify({
          session_id: "7b0e7f5e-64a4-4b8f-9d59-1c1d2f3e4a5b",
          hook_event_name: "SessionStart",
          cwd: h.home,
          transcript_path: NodePath.join(h.home, "t.jsonl"),
          source: "startup"
        }),
        env: { PATH: process.env.PATH ?? "", HOME: h.home },
        encoding: "utf8"
      })
      expect(session.stderr).toContain("captured")
      expect(filesUnder(capture).length).toBeGreaterThan(0)

      const purge = await h.blctx(["uninstall", "claude", "--purge", "--json"], { env })
      expect(purge.code, purge.stdout + purge.stderr).toBe(0)
      expect(purge.stdout).not.toContain("kept non-empty")
      expect(Fs.existsSync(NodePath.join(h.xdg.data, "blctx"))).toBe(false)
    },
    scaled(180_000)
  )
})
