import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { ConfigProvider, Layer } from "effect"
import { ClaudeCliEveryCall } from "../../../layers/claude-cli-live.js"

/** Test support for steps that run the real Claude Code CLI (`npm run test:tools` installs it). */

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..", "..")

/** The Claude Code CLI the tests run. CI installs it; a missing one fails the test, never skips it. */
export const realClaude = (): string => {
  const bin = NodePath.join(root, "test-tools", "node_modules", ".bin", "claude")
  try {
    Fs.accessSync(bin, Fs.constants.X_OK)
  } catch {
    throw new Error(`the real Claude Code CLI is missing at ${bin}: run npm run test:tools (it installs test-tools/)`)
  }
  return bin
}

/** The live ClaudeCli layer running the real CLI (through BLCTX_CLAUDE_BIN, as a person may set it). */
export const realClaudeLayer = (bin: string = realClaude()) =>
  // Tests change Claude's config between calls with claude itself: no answer is shared.
  ClaudeCliEveryCall.pipe(
    Layer.provide(
      Layer.setConfigProvider(
        ConfigProvider.fromMap(
          new Map([
            ["PATH", process.env.PATH ?? ""],
            ["BLCTX_CLAUDE_BIN", bin]
          ])
        )
      )
    )
  )

/** Runs the real claude as a person would in this HOME (and CLAUDE_CONFIG_DIR, when given). */
export const claudeIn = (home: string, args: ReadonlyArray<string>, claudeConfigDir?: string): string => {
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    PATH: process.env.PATH ?? "",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
  }
  if (claudeConfigDir !== undefined) env.CLAUDE_CONFIG_DIR = claudeConfigDir
  return execFileSync(realClaude(), [...args], { env, cwd: "/", encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
}

/**
 * A stdio MCP server that answers `initialize` and `tools/list` and ignores its arguments: what
 * Claude starts to check a registration, without blctx's daemon.
 */
export const writeFakeMcpServer = (dir: string): string => {
  const path = NodePath.join(dir, "fake-mcp.mjs")
  Fs.writeFileSync(
    path,
    `import readline from "node:readline"
const lines = readline.createInterface({ input: process.stdin })
lines.on("line", (line) => {
  const m = JSON.parse(line)
  if (m.id === undefined) return
  const result =
    m.method === "initialize"
      ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fake", version: "1" } }
      : m.method === "tools/list" ? { tools: [] } : {}
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n")
})
`
  )
  return path
}
