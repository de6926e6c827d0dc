import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { claudeConfigFile, parseMcpGet, sameClaudeServer } from "./claude-cli.js"

/** `claude mcp get` as Claude Code 2.1.332 prints it. */
const CONNECTED = `ok:
  Scope: User config (available in all your projects)
  Status: ✔ Connected
  Type: stdio
  Command: /usr/bin/node
  Args: /srv/mcp.mjs --installation-id 1
  Environment:

To remove this server, run: claude mcp remove ok -s user
`

const FAILED_WITH_ENV = `bar:
  Scope: Local config (private to you in this project)
  Status: ✘ Failed to connect
  Issue: CONNECTION_CLOSED: Connection closed
  Type: stdio
  Command: /usr/bin/env
  Args: x y z
  Environment:
    A=1
    B=two

To remove this server, run: claude mcp remove bar -s local
`

describe("parseMcpGet", () => {
  it("reads a connected user-scope stdio server", () => {
    const entry = Option.getOrThrow(parseMcpGet(CONNECTED))
    expect(entry).toMatchObject({
      name: "ok",
      userScope: true,
      connected: true,
      type: "stdio",
      args: "/srv/mcp.mjs --installation-id 1",
      env: []
    })
    expect(entry.command).toEqual(Option.some("/usr/bin/node"))
    expect(
      sameClaudeServer(entry, { command: "/usr/bin/node", args: ["/srv/mcp.mjs", "--installation-id", "1"] })
    ).toBe(true)
    expect(sameClaudeServer(entry, { command: "/usr/bin/node", args: ["/srv/mcp.mjs"] })).toBe(false)
  })

  it("reads a failed local-scope server with its environment, which is never blctx's", () => {
    const entry = Option.getOrThrow(parseMcpGet(FAILED_WITH_ENV))
    expect(entry).toMatchObject({ name: "bar", userScope: false, connected: false, env: ["A", "B"] })
    expect(entry.issue).toEqual(Option.some("CONNECTION_CLOSED: Connection closed"))
    expect(sameClaudeServer(entry, { command: "/usr/bin/env", args: ["x", "y", "z"] })).toBe(false)
  })

  it("says none for text that describes no server", () => {
    expect(Option.isNone(parseMcpGet('No MCP server named "x". Configured servers: foo'))).toBe(true)
    expect(Option.isNone(parseMcpGet(""))).toBe(true)
  })
})

describe("claudeConfigFile", () => {
  it("is ~/.claude.json for the default directory, else inside CLAUDE_CONFIG_DIR", () => {
    expect(claudeConfigFile("/h/.claude", "/h")).toBe("/h/.claude.json")
    expect(claudeConfigFile("/h/.claude/", "/h")).toBe("/h/.claude.json")
    expect(claudeConfigFile("/x/claude", "/h")).toBe("/x/claude/.claude.json")
  })
})
