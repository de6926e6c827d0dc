import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { runProcess } from "./support/isolated-home.js"
import {
  jsonRpcLines,
  type McpSession,
  mcpArgs,
  mcpEntry,
  startMcp,
  structured,
  toolErrorOf
} from "./support/mcp-client.js"
import { proofRounds } from "./support/proof-tier.js"

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const built = (path: string) => NodePath.join(root, "dist", "src", path)
const history = NodePath.join(root, "fixtures", "history")
/** kill -9s in a row under one MCP server: 6 in the quick tier, 20 under `npm run proof`. */
const KILLS = proofRounds({ quick: 6, full: 20 })

let home: DaemonHome | undefined
const sessions: Array<McpSession> = []
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined)
  home?.dispose()
  home = undefined
})

/** The MCP server as an agent starts it: the registered arguments, an environment of its own. */
const mcpFor = async (h: DaemonHome, installationId?: string) => {
  const session = await startMcp({
    args: mcpArgs(h, installationId),
    // No XDG variables but a wrong one: the registered arguments decide where the installation is.
    env: {
      HOME: h.home,
      PATH: process.env.PATH ?? "",
      BLCTX_SERVICE_MANAGER: "detached",
      XDG_STATE_HOME: "/nonexistent"
    },
    cwd: h.home
  })
  sessions.push(session)
  return session
}

const json = async <A>(h: DaemonHome, args: ReadonlyArray<string>) => {
  const result = await h.blctx(args)
  expect(result.code, `${args.join(" ")}: ${result.stderr}${result.stdout}`).toBe(0)
  return JSON.parse(result.stdout) as A
}

const installService = async (h: DaemonHome) => {
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
}

/** A Codex session file filed the way Codex files it, indexed through the daemon. */
const indexSession = async (h: DaemonHome, name: string) => {
  const dir = NodePath.join(h.codexHome, "sessions", "2026", "02", "02")
  Fs.mkdirSync(dir, { recursive: true })
  const file = NodePath.join(dir, `rollout-2026-02-02T09-00-00-${name}`)
  Fs.copyFileSync(NodePath.join(history, name), file)
  const indexed = await json<{ job: { state: string } }>(h, ["index", file, "--wait"])
  expect(indexed.job.state).toBe("completed")
  return file
}

interface Citation {
  readonly kind: string
  readonly path: string
  readonly line: number
  readonly byte_start: number
  readonly byte_end: number
}
interface Hit {
  readonly context_id: string
  readonly text: string
  readonly source_type: string
  readonly source_session_id?: string | null
  readonly context_session_id?: string | null
  readonly source: Citation
}
interface Search {
  readonly query_mode: string
  readonly query_mode_reason: string | null
  readonly results: ReadonlyArray<Hit>
  readonly limit: number
  readonly next_offset: number | null
  readonly truncated: boolean
}

/** The cited bytes of the transcript are the record whose message is the result's text. */
const citedMessage = (source: Citation) => {
  const line = Fs.readFileSync(source.path).subarray(source.byte_start, source.byte_end).toString("utf8")
  const record = JSON.parse(line) as { payload: { message?: string; content?: Array<{ text: string }> } }
  return record.payload.message ?? record.payload.content?.map((c) => c.text).join("") ?? ""
}

describe("the MCP server (blctx-mcp) over the daemon", () => {
  it("lists the read tools (then the note tools) with the shared schemas and answers each with real citations", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const file = await indexSession(h, "session-1.jsonl")
    const mcp = await mcpFor(h)

    // Tools, schemas generated from the daemon's own request schemas, read-only annotations.
    const { tools } = await mcp.client.listTools()
    expect(tools.map((t) => t.name)).toEqual([
      "search",
      "recent",
      "sessions",
      "context",
      "context_status",
      "open_session",
      "log_update",
      "update_note",
      "note_history",
      "forget"
    ])
    const { toolJsonSchema } = (await import(built("mcp/json-schema.js"))) as typeof import("../src/mcp/json-schema.js")
    const { SearchRequest } = (await import(
      built("retrieval/contract.js")
    )) as typeof import("../src/retrieval/contract.js")
    const { RecentRequest } = (await import(
      built("retrieval/recent.js")
    )) as typeof import("../src/retrieval/recent.js")
    const { ContextRequest } = (await import(
      built("retrieval/context.js")
    )) as typeof import("../src/retrieval/context.js")
    const schemaOf = (name: string) => tools.find((t) => t.name === name)?.inputSchema as Record<string, unknown>
    const searchShared = toolJsonSchema(SearchRequest) as { properties: Record<string, object> }
    expect(schemaOf("search")).toEqual({
      ...searchShared,
      properties: { ...searchShared.properties, limit: { ...searchShared.properties.limit, default: 5 } }
    })
    expect(schemaOf("recent")).toEqual(toolJsonSchema(RecentRequest))
    expect(schemaOf("context")).toEqual(toolJsonSchema(ContextRequest))
    expect(schemaOf("context_status")).toMatchObject({ type: "object", properties: {}, additionalProperties: false })
    for (const tool of tools) {
      if (tool.name === "forget") {
        // The one destructive tool (acceptance/forget.test.ts calls it).
        expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
        continue
      }
      // The note tools write (acceptance/mcp-notes.test.ts); the read tools are read-only.
      // update_note writes too, but a second identical call fails (stale_revision): not idempotent.
      const writes = tool.name === "open_session" || tool.name === "log_update" || tool.name === "update_note"
      expect(tool.annotations).toEqual({
        title: tool.title,
        readOnlyHint: !writes,
        idempotentHint: tool.name !== "update_note",
        destructiveHint: false,
        openWorldHint: false
      })
      expect(tool.outputSchema?.type).toBe("object")
      expect(JSON.stringify(tool.inputSchema)).not.toContain("$ref")
    }

    // search: the CLI's contract with the default limit of 5, a real citation, the session named.
    const found = structured<Search>(await mcp.call("search", { query: "blue-green rollout" }))
    expect(found.limit).toBe(5)
    expect(found.query_mode).toBe("lexical")
    expect(found.query_mode_reason).toContain("model")
    const top = found.results[0] as Hit
    expect(top.text).toContain("blue-green rollout")
    expect(top.source).toMatchObject({ kind: "transcript_span", path: file, line: 7 })
    expect(citedMessage(top.source)).toBe(top.text)
    expect(top).toMatchObject({
      source_type: "codex_transcript",
      source_session_id: "0199a000-0000-7000-8000-000000000000"
    })
    expect(top).not.toHaveProperty("session_id")
    const cli = await json<Omit<Search, "results"> & { results: Array<Hit & { session_id: string | null }> }>(h, [
      "search",
      "blue-green",
      "rollout",
      "--limit",
      "5"
    ])
    expect(found).toEqual({
      ...cli,
      results: cli.results.map(({ session_id, ...rest }) => ({ ...rest, source_session_id: session_id }))
    })
    // For clients that read text: each result's text in the history frame, then the same fields as
    // JSON with each text named by its excerpt.
    const block = (await mcp.call("search", { query: "blue-green rollout" })).content[0]
    const text = block?.type === "text" ? block.text : ""
    for (const [i, r] of found.results.entries()) {
      const opening = text
        .split("\n")
        .findIndex((line) => line.startsWith("<blctx-history ") && line.includes(` n="${i + 1}" `))
      expect(
        text
          .split("\n")
          .slice(opening + 1)
          .join("\n")
          .startsWith(`${r.text}\n</blctx-history nonce="`)
      ).toBe(true)
    }
    expect(JSON.parse(text.slice(text.lastIndexOf("\n") + 1))).toEqual({
      ...found,
      results: found.results.map((r, i) => ({ ...r, text: `[excerpt ${i + 1}]` }))
    })

    // recent: the turns of a window (UTC without an offset), with citations.
    interface Recent {
      turns: Array<{ source_session_id?: string; messages: Array<{ text: string; source: Citation }> }>
    }
    const recent = structured<Recent>(await mcp.call("recent", { since: "2026-02-02", until: "2026-02-03", limit: 1 }))
    expect(recent.turns).toHaveLength(1)
    expect(recent.turns[0]?.source_session_id).toBe("0199a000-0000-7000-8000-000000000000")
    const message = recent.turns[0]?.messages.at(-1)
    expect(message === undefined ? "" : citedMessage(message.source)).toBe(message?.text)

    // context: the messages around the search result, the anchor marked.
    interface Context {
      source_session_id?: string
      messages: Array<{ is_anchor: boolean; text: string; source: Citation; source_type: string }>
    }
    const context = structured<Context>(await mcp.call("context", { context_id: top.context_id }))
    expect(context.source_session_id).toBe("0199a000-0000-7000-8000-000000000000")
    const anchor = context.messages.find((m) => m.is_anchor)
    expect(anchor?.text).toContain("blue-green rollout")
    expect(anchor?.source).toEqual(top.source)

    // context_status: what the index covers.
    const status = structured<{ index_state: string; query_mode: string; coverage: { messages: number } }>(
      await mcp.call("context_status")
    )
    expect(status).toMatchObject({ index_state: "model_missing", query_mode: "lexical", coverage: { messages: 24 } })

    // Nothing matched is an answer; a bad argument and an unknown context id are errors naming the problem.
    const none = await mcp.call("search", { query: "xylophone quasar marmalade" })
    expect(none.isError ?? false).toBe(false)
    expect(structured<Search>(none).results).toEqual([])
    const bad = toolErrorOf(await mcp.call("search", { query: "rollout", limit: 1000, filters: { since: 2026 } }))
    expect(bad.kind).toBe("invalid_arguments")
    expect(bad.fields?.map((f) => f.field).sort()).toEqual(["filters.since", "limit"])
    const unknown = toolErrorOf(await mcp.call("context", { context_id: "m999999" }))
    expect(unknown).toMatchObject({ kind: "invalid_query", message: "no result has context id m999999" })
    const badDate = toolErrorOf(await mcp.call("recent", { since: "yesterday" }))
    expect(badDate.kind).toBe("invalid_query")
    // The forms it takes, with what a time without an offset means, said once (in the message).
    expect(badDate.message).toContain("YYYY-MM-DD")
    expect(`${badDate.message} ${badDate.remediation}`.match(/UTC/g)).toHaveLength(1)

    // Only JSON-RPC on stdout; the server exits by itself when the client closes its stdin.
    const raw = mcp.rawStdout()
    sessions.splice(sessions.indexOf(mcp), 1)
    expect(await mcp.close()).toEqual({ code: 0, signal: null })
    expect(jsonRpcLines(raw)).toBe(11)
    expect(mcp.stderr()).toContain("tool call failed")
  })

  it("tells a daemon that is down from no match, restarts a crashed one, and keeps stdout pure", async () => {
    const h = makeDaemonHome("detached")
    home = h
    // Installed, but no background service: no daemon runs, and none may be started behind the person's back.
    const data = await h.blctx(["install", "codex", "--step", "data_directory", "--json"])
    expect(data.code, data.stdout + data.stderr).toBe(0)
    const mcp = await mcpFor(h)
    const down = toolErrorOf(await mcp.call("search", { query: "blue-green rollout" }))
    expect(down.kind).toBe("daemon_unavailable")
    expect(down.message).toContain(h.socketPath)
    expect(down.message).toContain("not running")
    expect(down.remediation).toContain("blctx install codex")
    expect(h.daemonPids()).toEqual([])

    // Once the service runs, the same server answers; on an empty index nothing matches, which is an answer.
    await installService(h)
    const empty = await mcp.call("search", { query: "blue-green rollout" })
    expect(empty.isError ?? false).toBe(false)
    expect(structured<Search>(empty).results).toEqual([])

    // A daemon killed with -9 is started again for the next call (nothing else restarts a detached one).
    const [crashed] = h.daemonPids()
    expect(crashed).toBeDefined()
    process.kill(crashed as number, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (isAlive(crashed as number) ? undefined : true))
    const afterCrash = await mcp.call("context_status")
    expect(afterCrash.isError ?? false, JSON.stringify(afterCrash.content)).toBe(false)
    expect(h.daemonPids()).toHaveLength(1)
    expect(h.daemonPids()).not.toContain(crashed)

    // A server registered for another installation is refused, whatever daemon answers.
    const stale = await mcpFor(h, "0b7a1f3e-2c4d-4e5f-8a9b-0c1d2e3f4a5b")
    const mismatch = toolErrorOf(await stale.call("context_status"))
    expect(mismatch.kind).toBe("installation_mismatch")
    expect(mismatch.remediation).toContain("blctx install codex")

    // An uninstalled blctx (manifest inactive) says so and how to install it again; no daemon is started.
    const uninstall = await h.blctx(["uninstall", "codex", "--json"])
    expect(uninstall.code, uninstall.stdout + uninstall.stderr).toBe(0)
    const inactive = toolErrorOf(await mcp.call("recent", { days: 1 }))
    expect(inactive.kind).toBe("installation_inactive")
    expect(inactive.remediation).toContain("blctx install codex")
    expect(h.daemonPids()).toEqual([])

    // Through all of it (a daemon started on demand, failures logged) stdout held JSON-RPC alone.
    expect(mcp.stderr()).toContain("daemon_unavailable")
    expect(jsonRpcLines(mcp.rawStdout())).toBe(5)
    expect(jsonRpcLines(stale.rawStdout())).toBe(2)
  })

  it(`answers the call after each of ${KILLS} kill -9s in a row, however soon after the daemon is gone`, async () => {
    // A killed daemon accepts connections until its last thread exits, then drops them: a call
    // made in that moment must start a new daemon, not fail (seen as a lost write, EPIPE).
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const mcp = await mcpFor(h)
    const failures: Array<string> = []
    for (let round = 0; round < KILLS; round++) {
      const [running] = h.daemonPids()
      expect(running, `round ${round}: a daemon runs`).toBeDefined()
      process.kill(running as number, "SIGKILL")
      await waitFor("the killed daemon to be gone", () => (isAlive(running as number) ? undefined : true))
      const status = await mcp.call("context_status")
      if (status.isError === true) failures.push(`round ${round}: ${JSON.stringify(status.content)}`)
    }
    expect(failures).toEqual([])
    expect(h.daemonPids()).toHaveLength(1)
    expect(mcp.stderr()).not.toContain("tool call defect")
  })

  it("refuses a command line that names no installation, on stderr alone", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const result = await runProcess(process.execPath, [mcpEntry(), "--installation-id", "not-a-uuid"], { env: h.env })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(JSON.parse(result.stderr)).toMatchObject({ message: "blctx-mcp: invalid arguments" })
  })
})
