import { execFile, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { benchHome, figure, line, percentile } from "./measure.js"
import { writeSyntheticHistory } from "./synthetic-history.js"

const exec = promisify(execFile)
const here = NodePath.dirname(fileURLToPath(import.meta.url))
const cli = NodePath.join(here, "..", "programs", "cli.js")
/** The bundle codex_mcp registers: what an agent starts in every conversation. */
const mcpEntry = NodePath.join(here, "..", "bin", "blctx-mcp.mjs")

const COLD_STARTS = 20
const SEARCHES = 200

const msSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

/** How long a bare `node -e ""` takes to start and exit: the floor any Node program pays. */
const bareNode = () =>
  new Promise<number>((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve(msSince(start)))
  })

const connectMcp = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const client = new Client({ name: "blctx-bench", version: "0" })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpEntry, ...args],
    env: env as Record<string, string>,
    stderr: "ignore"
  })
  await client.connect(transport)
  return client
}

const figures = (times: Array<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) }
}

/**
 * The MCP server as an agent meets it, over stdio against blctxd in a temporary home with indexed
 * history: its cold start up to the answer to `tools/list` (spawn, initialize, list: the front's
 * work) and up to the first `search` answer (the full server loaded), against a bare `node -e ""`
 * in the same run, and the `search` round trip from an MCP client (lexical: no model is installed,
 * so model time is excluded).
 */
export const run = async () => {
  const { home, env, dispose } = benchHome("blctx-bench-mcp-")
  try {
    await exec(process.execPath, [cli, "install", "codex", "--step", "background_service", "--json"], { env })
    const files = writeSyntheticHistory(NodePath.join(home, "history"), 20, 50)
    await exec(process.execPath, [cli, "index", ...files, "--wait"], { env, maxBuffer: 16 * 1024 * 1024 })
    const state = NodePath.join(home, ".local", "state")
    const { installation_id } = JSON.parse(readFileSync(NodePath.join(state, "blctx", "installation.json"), "utf8"))
    const args = [
      "--installation-id",
      String(installation_id),
      "--data-home",
      NodePath.join(home, ".local", "share"),
      "--config-home",
      NodePath.join(home, ".config"),
      "--cache-home",
      NodePath.join(home, ".cache"),
      "--state-home",
      state
    ]
    line("history", `${files.length} files, 1000 turns, indexed without a model (lexical search)`)

    const bare: Array<number> = []
    const cold: Array<number> = []
    const firstCall: Array<number> = []
    for (let i = 0; i < COLD_STARTS; i++) {
      bare.push(await bareNode())
      const start = process.hrtime.bigint()
      const client = await connectMcp(args, env)
      const tools = await client.listTools()
      cold.push(msSince(start))
      if (tools.tools.length === 0) throw new Error("the MCP server listed no tools")
      // The first call waits for the full server (effect, the SDK) the handshake did not need.
      const answer = await client.callTool({ name: "search", arguments: { query: "deploy rollout" } })
      firstCall.push(msSince(start))
      if (answer.isError === true) throw new Error(`search failed: ${JSON.stringify(answer.content)}`)
      await client.close()
    }
    const c = figures(cold)
    const b = figures(bare)
    const f = figures(firstCall)
    line(
      `cold start to tools/list p50 / p95 (${COLD_STARTS} starts)`,
      `${c.p50.toFixed(0)} ms / ${c.p95.toFixed(0)} ms`
    )
    line("cold start to the first search's answer p50 / p95", `${f.p50.toFixed(0)} ms / ${f.p95.toFixed(0)} ms`)
    line('bare node -e "" p50 / p95 (same run)', `${b.p50.toFixed(0)} ms / ${b.p95.toFixed(0)} ms`)
    figure("MCP server cold start to tools/list p50", c.p50, "ms", {
      reference: { name: 'bare node -e ""', value: b.p50 }
    })

    const client = await connectMcp(args, env)
    try {
      const queries = ["deploy rollout", "database migration", "flaky test", "api latency", "review"]
      for (let i = 0; i < 10; i++) await client.callTool({ name: "search", arguments: { query: "warm up" } })
      const times: Array<number> = []
      for (let i = 0; i < SEARCHES; i++) {
        const start = process.hrtime.bigint()
        const answer = await client.callTool({ name: "search", arguments: { query: queries[i % queries.length] } })
        times.push(msSince(start))
        if (answer.isError === true) throw new Error(`search failed: ${JSON.stringify(answer.content)}`)
      }
      const s = figures(times)
      line(
        `search round trip through MCP p50 / p95 (${SEARCHES} calls)`,
        `${s.p50.toFixed(1)} ms / ${s.p95.toFixed(1)} ms`
      )
    } finally {
      await client.close()
    }
  } finally {
    await exec(process.execPath, [cli, "uninstall", "codex", "--purge", "--json"], { env }).catch(() => undefined)
    dispose()
  }
}
