import { describe, expect, it } from "vitest"
import { geminiCliHome, parseMcpList, sameGeminiServer } from "./gemini-cli.js"

/** Text as Gemini CLI 0.61 printed it (NO_COLOR), in an isolated home. */
const MCP_LIST = `Configured MCP servers:

✓ base-layer-context: /usr/bin/node /opt/blctx/dist/bin/blctx-mcp.cjs --installation-id 6f1c (stdio) - Connected
✗ other: /bin/echo hi (stdio) - Disconnected
○ docs (from my-ext): https://example.test/mcp (http) - Disabled
`

describe("gemini mcp list", () => {
  it("reads each server's name, status, transport and what it runs", () => {
    expect(parseMcpList(MCP_LIST)).toEqual([
      {
        name: "base-layer-context",
        status: "Connected",
        connected: true,
        transport: "stdio",
        target: "/usr/bin/node /opt/blctx/dist/bin/blctx-mcp.cjs --installation-id 6f1c"
      },
      { name: "other", status: "Disconnected", connected: false, transport: "stdio", target: "/bin/echo hi" },
      { name: "docs", status: "Disabled", connected: false, transport: "http", target: "https://example.test/mcp" }
    ])
    expect(parseMcpList("No MCP servers configured.\n")).toEqual([])
  })

  it("an entry is blctx's server only when it runs exactly the command over stdio", () => {
    const [ours] = parseMcpList(MCP_LIST)
    if (ours === undefined) throw new Error("no entry")
    const args = ["/opt/blctx/dist/bin/blctx-mcp.cjs", "--installation-id", "6f1c"]
    expect(sameGeminiServer(ours, { command: "/usr/bin/node", args })).toBe(true)
    expect(sameGeminiServer(ours, { command: "/usr/bin/node", args: args.slice(0, 2) })).toBe(false)
  })
})

describe("GEMINI_CLI_HOME", () => {
  it("is the folder that holds .gemini", () => {
    expect(geminiCliHome("/home/a/.gemini")).toBe("/home/a")
    expect(geminiCliHome("/srv/x/.gemini/")).toBe("/srv/x")
  })
})
