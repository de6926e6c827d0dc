import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { writeSyntheticHistory } from "../bench/synthetic-history.js"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { bundledProgram, installationArgs } from "./support/isolated-home.js"
import { proofRounds } from "./support/proof-tier.js"

// Two blctxd started at the same instant, again and again: exactly one serves, the other says
// why and exits, and the database stays whole. An MCP client that goes away in the middle of a
// call: the MCP server exits, and the daemon keeps serving.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const daemonProgram = NodePath.join(root, "dist", "programs", "daemon.js")
/** Simultaneous starts: 3 pairs in the quick tier, 10 under `npm run proof`. */
const ROUNDS = proofRounds({ quick: 3, full: 10 })

interface SqliteDatabase {
  prepare(sql: string): { all(): Array<Record<string, unknown>> }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => SqliteDatabase

interface Exited {
  readonly code: number | null
  readonly stderr: string
}

const start = (h: DaemonHome) => {
  const child = spawn(
    process.execPath,
    ["--optimize-for-size", daemonProgram, ...installationArgs(h, h.installationId())],
    {
      env: { ...process.env, HOME: h.home },
      stdio: ["ignore", "ignore", "pipe"]
    }
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exited = new Promise<Exited>((resolve) => child.on("close", (code) => resolve({ code, stderr })))
  return { child, exited }
}

const stop = async (child: ChildProcess, exited: Promise<Exited>) => {
  child.kill("SIGTERM")
  await exited
}

let home: DaemonHome | undefined
const children: Array<ChildProcess> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  home?.dispose()
  home = undefined
})

describe("concurrent starts and vanishing clients", () => {
  it(`two blctxd started at the same instant, ${ROUNDS} times: one serves, the other refuses and exits`, async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    // The installation's own daemon steps aside: the rounds start their own pairs.
    for (const pid of h.daemonPids()) process.kill(pid, "SIGTERM")
    await waitFor("no daemon", () => (h.daemonPids().length === 0 ? true : undefined))

    let refusals = 0
    for (let round = 0; round < ROUNDS; round++) {
      const pair = [start(h), start(h)]
      children.push(...pair.map((p) => p.child))
      // One of them exits: the one that lost the writer lock.
      const loser = await Promise.race(pair.map((p, i) => p.exited.then((e) => ({ i, ...e }))))
      expect(loser.code, loser.stderr).not.toBe(0)
      expect(loser.stderr).toMatch(/another blctxd|writer|lock/i)
      refusals++
      const winner = pair[1 - loser.i]
      expect(winner).toBeDefined()
      if (winner === undefined) continue
      expect(isAlive(winner.child.pid ?? -1)).toBe(true)
      const ping = await h.blctx(["ping", "--json"])
      expect(ping.code, ping.stderr).toBe(0)
      expect(JSON.parse(ping.stdout).daemon.pid).toBe(winner.child.pid)
      await stop(winner.child, winner.exited)
    }
    const db = new Database(h.database, { readonly: true })
    try {
      expect(db.prepare("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }])
    } finally {
      db.close()
    }
    console.log(`simultaneous starts: ${ROUNDS} pairs, ${refusals} refused with a reason, one daemon served each time`)
  }, 600_000)

  it("an MCP client that disconnects in the middle of a search: the server exits, the daemon serves on", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const files = writeSyntheticHistory(NodePath.join(h.home, "history"), 20, 100)
    const indexed = await h.blctx(["index", ...files, "--wait", "--json"])
    expect(indexed.code, indexed.stderr).toBe(0)
    const [daemon] = h.daemonPids()

    let vanished = 0
    for (let round = 0; round < 5; round++) {
      const mcp = spawn(process.execPath, [bundledProgram("blctx-mcp"), ...installationArgs(h, h.installationId())], {
        env: { ...process.env, HOME: h.home },
        stdio: ["pipe", "pipe", "pipe"]
      })
      children.push(mcp)
      const closed = new Promise<number | null>((resolve) => mcp.on("close", (code) => resolve(code)))
      const send = (message: unknown) => mcp.stdin?.write(`${JSON.stringify(message)}\n`)
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "vanishing", version: "0" } }
      })
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "search", arguments: { query: "deploy rollout migration daemon socket", limit: 50 } }
      })
      // Gone before the answer: stdin closed, stdout no longer read.
      mcp.stdin?.destroy()
      mcp.stdout?.destroy()
      const code = await Promise.race([
        closed,
        new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 60_000))
      ])
      expect(code, "the MCP server outlived its client by a minute").not.toBe("running")
      vanished++
    }
    // The same daemon answers.
    const ping = await h.blctx(["ping", "--json"])
    expect(ping.code, ping.stderr).toBe(0)
    expect(JSON.parse(ping.stdout).daemon.pid).toBe(daemon)
    const search = await h.blctx(["search", "deploy", "--json"])
    expect(search.code, search.stderr).toBe(0)
    console.log(
      `vanishing MCP clients: ${vanished} servers exited after their client left mid-call; the daemon served on`
    )
  }, 600_000)
})
