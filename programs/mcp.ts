#!/usr/bin/env node
// blctx-mcp: the stdio MCP server an agent launches. This entry is its effect-free front: it
// answers the handshake from a table recorded from the full server at build time while the full
// server (programs/mcp-main.ts, a chunk loaded here) starts, then hands the session over
// (src/mcp/mcp-front.ts). scripts/bundle.mjs fails the build if effect slips into what it loads.
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { HANDSHAKE_TABLE_FILE, parseHandshakeTable } from "../src/mcp/handshake.js"
import { startFront } from "../src/mcp/mcp-front.js"
import { claimStdout } from "../src/mcp/stdout-guard.js"

// stdout carries the JSON-RPC stream and nothing else: from here on every other write to it
// (console.log anywhere, a logger, a library) goes to stderr. No module above writes anything
// while it loads (the acceptance test reads stdout from the first byte).
const protocolOut = claimStdout({ stdout: process.stdout, stderr: process.stderr })
// A write that fails (EPIPE) means the client is gone: end quietly, as when it closes stdin.
protocolOut.once("error", () => process.exit(0))
// The detached supervisor may create its start lock and log while it starts blctxd on demand.
process.umask(0o077)

// Every entry point (dist/programs/mcp.js, the bundled dist/bin/blctx-mcp.mjs) sits two levels
// below the package root; the table is dist/mcp-handshake.json. Without it (a build that did not
// write it) the front answers nothing and the full server answers everything.
const packageRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..")
const tableText = (() => {
  try {
    return Fs.readFileSync(NodePath.join(packageRoot, "dist", HANDSHAKE_TABLE_FILE), "utf8")
  } catch {
    return ""
  }
})()
const front = startFront(process.stdin, protocolOut, parseHandshakeTable(tableText))

const { serveMcpSession } = await import("./mcp-main.js")
front.handOver((input, output) => serveMcpSession({ input, output, packageRoot }))
