import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { jsonRpcLines, type McpSession, mcpArgs, startMcp, structured, toolErrorOf } from "./support/mcp-client.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

// open_session and log_update end to end: the SDK's MCP client against the built server, which
// reaches the real daemon over its socket; the daemon writes the notes on its writer connection.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const built = (path: string) => NodePath.join(root, "dist", "src", path)

let home: DaemonHome | undefined
const sessions: Array<McpSession> = []
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined)
  home?.dispose()
  home = undefined
})

const mcpFor = async (h: DaemonHome) => {
  const session = await startMcp({
    args: mcpArgs(h),
    env: { HOME: h.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
    cwd: h.home
  })
  sessions.push(session)
  return session
}

const installService = async (h: DaemonHome) => {
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
}

interface Session {
  readonly context_session_id: string
  readonly binding_key: string
  readonly project: string | null
  readonly created: boolean
}
interface Logged {
  readonly note_id: string
  readonly revision: number
  readonly source_type: string
  readonly context_session_id: string
  readonly context_id: string
  readonly kind: string
  readonly tags: ReadonlyArray<string>
  readonly redactions: number
  readonly created: boolean
}
interface Hit {
  readonly context_id: string
  readonly text: string
  readonly source_type: string
  readonly context_session_id?: string | null
  readonly source_session_id?: string | null
  readonly kind: string
  readonly project: string | null
  readonly source: { readonly kind: string; readonly note_id?: string; readonly revision?: number }
}
interface Search {
  readonly query_mode: string
  readonly results: ReadonlyArray<Hit>
}
interface Status {
  readonly query_mode: string
  readonly authored_updates_pending: number
}

/** Every byte of the data directory's files (database, WAL, SHM). */
const dataBytes = (h: DaemonHome) => {
  const dir = NodePath.dirname(h.database)
  return Buffer.concat(
    Fs.readdirSync(dir)
      .map((name) => NodePath.join(dir, name))
      .filter((path) => Fs.statSync(path).isFile())
      .map((path) => Fs.readFileSync(path))
  )
}

describe("MCP open_session and log_update (blctx-mcp over the daemon)", () => {
  it("open a session, log notes once, refuse conflicts and limits, and find the notes at once", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const mcp = await mcpFor(h)

    // Listed after the read tools, not read-only, with the input schemas of the daemon's requests.
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
    const { LogUpdateRequest, OpenSessionRequest } = (await import(
      built("notes/notes-contract.js")
    )) as typeof import("../src/notes/notes-contract.js")
    const toolNamed = (name: string) => tools.find((t) => t.name === name)
    expect(toolNamed("open_session")?.inputSchema).toEqual(toolJsonSchema(OpenSessionRequest))
    expect(toolNamed("log_update")?.inputSchema).toEqual(toolJsonSchema(LogUpdateRequest))
    for (const name of ["open_session", "log_update"]) {
      expect(toolNamed(name)?.annotations).toEqual({
        title: toolNamed(name)?.title,
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false
      })
    }

    // open_session: blctx's own id for a binding; the same binding again is the same session.
    const binding = randomUUID()
    const session = structured<Session>(
      await mcp.call("open_session", { binding_key: binding, project: "/home/dev/shop-api" })
    )
    expect(session).toMatchObject({ binding_key: binding, project: "/home/dev/shop-api", created: true })
    expect(session.context_session_id).not.toBe(binding)
    expect(structured<Session>(await mcp.call("open_session", { binding_key: binding }))).toMatchObject({
      context_session_id: session.context_session_id,
      created: false
    })
    const conflict = toolErrorOf(await mcp.call("open_session", { binding_key: binding, project: "/elsewhere" }))
    expect(conflict).toMatchObject({ kind: "session_conflict", tool: "open_session" })
    expect(conflict.message).toContain(session.context_session_id)

    // log_update: committed and acknowledged; the same call again writes nothing new.
    const update = {
      session_id: session.context_session_id,
      update_id: randomUUID(),
      text: "Decided: the shop API ships blue-green behind the okapi feature flag.",
      tags: ["deploy"],
      kind: "decision",
      source_text: "We will ship blue-green behind the okapi feature flag."
    }
    const logged = structured<Logged>(await mcp.call("log_update", update))
    expect(logged).toMatchObject({
      revision: 1,
      source_type: "authored_update",
      context_session_id: session.context_session_id,
      kind: "decision",
      tags: ["deploy"],
      created: true
    })
    expect(logged).not.toHaveProperty("session_id")
    expect(structured<Logged>(await mcp.call("log_update", update))).toEqual({ ...logged, created: false })
    const changed = toolErrorOf(await mcp.call("log_update", { ...update, text: "Decided: something else." }))
    expect(changed).toMatchObject({ kind: "update_conflict", tool: "log_update" })
    expect(changed.message).toContain("text")
    const stranger = toolErrorOf(
      await mcp.call("log_update", { ...update, update_id: randomUUID(), session_id: randomUUID() })
    )
    expect(stranger.kind).toBe("unknown_session")
    expect(stranger.remediation).toContain("open_session")

    // Each limit, a field error before anything is sent.
    for (const [args, field, problem] of [
      [{ text: "x".repeat(16_001) }, "text", "16,001 characters"],
      [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "tags", "has 21 tags"],
      [{ tags: ["t".repeat(65)] }, "tags.0", "65 characters"]
    ] as const) {
      const refused = toolErrorOf(await mcp.call("log_update", { ...update, update_id: randomUUID(), ...args }))
      expect(refused.kind).toBe("invalid_arguments")
      expect(refused.fields?.find((f) => f.field === field)?.problem).toContain(problem)
    }

    // Found at once: word search (with its session and source), context, and the pending count.
    const found = structured<Search>(await mcp.call("search", { query: "okapi feature flag" }))
    expect(found.query_mode).toBe("lexical")
    expect(found.results).toHaveLength(1)
    expect(found.results[0]).toMatchObject({
      text: update.text,
      source_type: "authored_update",
      context_session_id: session.context_session_id,
      kind: "decision",
      project: "/home/dev/shop-api",
      source: { kind: "note_revision", note_id: logged.note_id, revision: 1 }
    })
    expect(found.results[0]).not.toHaveProperty("source_session_id")
    const bySession = structured<Search>(
      await mcp.call("search", { query: "okapi", filters: { session: session.context_session_id } })
    )
    expect(bySession.results.map((r) => r.context_id)).toEqual([found.results[0]?.context_id])
    const context = structured<{
      context_session_id?: string
      messages: ReadonlyArray<{ text: string; is_anchor: boolean }>
    }>(await mcp.call("context", { context_id: logged.context_id }))
    expect(context.context_session_id).toBe(session.context_session_id)
    expect(context.messages).toEqual([expect.objectContaining({ text: update.text, is_anchor: true })])
    expect(structured<Status>(await mcp.call("context_status")).authored_updates_pending).toBe(1)

    // Acknowledged means committed: a daemon killed right after still has the note.
    const second = structured<Logged>(
      await mcp.call("log_update", {
        session_id: session.context_session_id,
        update_id: randomUUID(),
        text: "Status: the narwhal migration is done."
      })
    )
    const [daemon] = h.daemonPids()
    process.kill(daemon as number, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (isAlive(daemon as number) ? undefined : true))
    const afterCrash = structured<Search>(await mcp.call("search", { query: "narwhal migration" }))
    expect(afterCrash.results.map((r) => r.source.note_id)).toEqual([second.note_id])

    // Only JSON-RPC on stdout.
    jsonRpcLines(mcp.rawStdout())
  })

  it("redacts a secret before anything is stored: no byte of it reaches the data directory", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const mcp = await mcpFor(h)
    const secret = "sk-proj-FakeOpenAiKey0123456789abcdefGHIJ"
    const session = structured<Session>(await mcp.call("open_session", { binding_key: randomUUID() }))
    const logged = structured<Logged>(
      await mcp.call("log_update", {
        session_id: session.context_session_id,
        update_id: randomUUID(),
        text: `Rotated the staging key; OPENAI_API_KEY is ${secret} until Friday.`,
        tags: [`key:${secret}`],
        source_text: `The new key is ${secret}.`
      })
    )
    expect(logged.redactions).toBe(3)
    const context = structured<{ messages: ReadonlyArray<{ text: string }> }>(
      await mcp.call("context", { context_id: logged.context_id })
    )
    expect(context.messages[0]?.text).toContain("[REDACTED:openai_key]")
    expect(
      structured<Search>(await mcp.call("search", { query: "FakeOpenAiKey0123456789abcdefGHIJ" })).results
    ).toEqual([])
    const bytes = dataBytes(h)
    expect(bytes.includes("Rotated the staging key")).toBe(true)
    expect(bytes.includes("FakeOpenAiKey0123456789abcdefGHIJ")).toBe(false)
  })

  it.skipIf(modelData() === undefined)(
    "with the tiny model (BLCTX_TEST_MODEL_DATA): a note is embedded in the background and search turns hybrid",
    async () => {
      const data = modelData() as string
      const server = await serveTinyModel(data)
      try {
        const h = makeDaemonHome("detached")
        home = h
        useTinyModel(h, data, server)
        const install = await h.blctx(["install", "codex", "--step", "embedding_model", "--json"])
        expect(install.code, install.stdout).toBe(0)
        await installService(h)
        const mcp = await mcpFor(h)
        const session = structured<Session>(await mcp.call("open_session", { binding_key: randomUUID() }))
        const logged = structured<Logged>(
          await mcp.call("log_update", {
            session_id: session.context_session_id,
            update_id: randomUUID(),
            text: "Decision: retries use exponential backoff with jitter, capped at thirty seconds."
          })
        )
        expect(logged.created).toBe(true)
        const status = await waitFor("the note's vector", async () => {
          const s = structured<Status>(await mcp.call("context_status"))
          return s.authored_updates_pending === 0 && s.query_mode === "hybrid" ? s : undefined
        })
        expect(status.authored_updates_pending).toBe(0)
        const found = structured<Search>(await mcp.call("search", { query: "exponential backoff jitter" }))
        expect(found.query_mode).toBe("hybrid")
        expect(found.results[0]?.source).toMatchObject({ kind: "note_revision", note_id: logged.note_id })
      } finally {
        await server.close()
      }
    },
    300_000
  )
})
