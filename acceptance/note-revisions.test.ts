import { randomUUID } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { type DaemonHome, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { jsonRpcLines, type McpSession, mcpArgs, startMcp, structured, toolErrorOf } from "./support/mcp-client.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

// Revisions of notes end to end: the built MCP server (update_note, note_history, search) and the
// built CLI (blctx notes list|show|history) against the real daemon of one isolated home.

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

interface Written {
  readonly note_id: string
  readonly revision: number
  readonly previous_revision?: number
  readonly context_session_id: string
  readonly context_id: string
  readonly created: boolean
}
interface Revision {
  readonly revision: number
  readonly text: string
  readonly tags: ReadonlyArray<string>
  readonly context_session_id: string
  readonly authorship: string
  readonly created_at: string
}
interface History {
  readonly note_id: string
  readonly current_revision: number
  readonly revisions: ReadonlyArray<Revision>
}
interface Search {
  readonly query_mode: string
  readonly results: ReadonlyArray<{
    readonly text: string
    readonly source: { readonly kind: string; readonly note_id?: string; readonly revision?: number }
  }>
}

const TEXTS = [
  "Decision: the billing service retries webhooks three times.",
  "Decision: the billing service retries webhooks five times, with backoff.",
  "Decision: the billing service retries webhooks until the dead-letter queue takes them."
] as const

/** log_update, then update_note twice: the note at revision 3. */
const threeRevisions = async (mcp: McpSession) => {
  const session = structured<{ context_session_id: string }>(
    await mcp.call("open_session", { binding_key: randomUUID(), project: "/home/dev/billing" })
  )
  const logged = structured<Written>(
    await mcp.call("log_update", {
      session_id: session.context_session_id,
      update_id: randomUUID(),
      text: TEXTS[0],
      tags: ["billing"],
      kind: "decision"
    })
  )
  const second = structured<Written>(
    await mcp.call("update_note", { note_id: logged.note_id, expected_revision: 1, text: TEXTS[1] })
  )
  const third = structured<Written>(
    await mcp.call("update_note", {
      note_id: logged.note_id,
      expected_revision: 2,
      text: TEXTS[2],
      tags: ["billing", "webhooks"],
      authorship: "user_requested"
    })
  )
  return { session, logged, second, third }
}

describe("note revisions (blctx-mcp and blctx notes over the daemon)", () => {
  it("log_update, update_note twice: note_history shows three revisions, search only the third", async () => {
    const h = makeDaemonHome("detached")
    home = h
    await installService(h)
    const mcp = await mcpFor(h)
    const { session, logged, second, third } = await threeRevisions(mcp)
    expect(second).toMatchObject({ note_id: logged.note_id, revision: 2, previous_revision: 1, created: true })
    expect(third).toMatchObject({ note_id: logged.note_id, revision: 3, previous_revision: 2, created: true })
    expect(third.context_session_id).toBe(session.context_session_id)

    // The same expected_revision again is stale, with the current revision and what to do.
    const stale = toolErrorOf(
      await mcp.call("update_note", { note_id: logged.note_id, expected_revision: 2, text: "Decision: never." })
    )
    expect(stale).toMatchObject({ kind: "stale_revision", tool: "update_note" })
    expect(stale.message).toContain("revision 3")
    expect(stale.remediation).toContain("note_history")
    const unknown = toolErrorOf(await mcp.call("note_history", { note_id: randomUUID() }))
    expect(unknown.kind).toBe("unknown_note")

    const history = structured<History>(await mcp.call("note_history", { note_id: logged.note_id }))
    expect(history.current_revision).toBe(3)
    expect(history.revisions.map((r) => [r.revision, r.text, r.tags, r.authorship])).toEqual([
      [1, TEXTS[0], ["billing"], "agent_generated"],
      [2, TEXTS[1], ["billing"], "agent_generated"],
      [3, TEXTS[2], ["billing", "webhooks"], "user_requested"]
    ])
    for (const r of history.revisions) expect(r.context_session_id).toBe(session.context_session_id)

    // Search returns the third revision only, and says older ones exist.
    const found = structured<Search>(await mcp.call("search", { query: "billing service retries webhooks" }))
    expect(found.results.map((r) => r.text)).toEqual([TEXTS[2]])
    expect(found.results[0]?.source).toEqual({
      kind: "note_revision",
      note_id: logged.note_id,
      revision: 3,
      revisions: 3
    })
    expect(structured<Search>(await mcp.call("search", { query: "three times" })).results).toEqual([])
    expect(structured<Search>(await mcp.call("search", { query: "five backoff" })).results).toEqual([])
    const recent = structured<{ turns: ReadonlyArray<{ messages: ReadonlyArray<{ text: string }> }> }>(
      await mcp.call("recent", {})
    )
    expect(recent.turns.flatMap((t) => t.messages.map((m) => m.text))).toEqual([TEXTS[2]])
    jsonRpcLines(mcp.rawStdout())

    // The CLI on the same home: one JSON document each.
    const list = await h.blctx(["notes", "list"])
    expect(list.code, list.stderr).toBe(0)
    const listed = JSON.parse(list.stdout) as { notes: ReadonlyArray<Record<string, unknown>> }
    expect(listed.notes).toHaveLength(1)
    expect(listed.notes[0]).toMatchObject({
      note_id: logged.note_id,
      current_revision: 3,
      kind: "decision",
      tags: ["billing", "webhooks"],
      session_id: session.context_session_id,
      project: "/home/dev/billing",
      excerpt: TEXTS[2]
    })
    const show = await h.blctx(["notes", "show", logged.note_id])
    expect(show.code, show.stderr).toBe(0)
    expect(JSON.parse(show.stdout)).toMatchObject({
      note_id: logged.note_id,
      revisions: 3,
      current: { revision: 3, text: TEXTS[2] }
    })
    const cliHistory = await h.blctx(["notes", "history", logged.note_id])
    expect(cliHistory.code, cliHistory.stderr).toBe(0)
    const shown = JSON.parse(cliHistory.stdout) as {
      revisions: ReadonlyArray<{ revision: number; text: string; context_id: string }>
    }
    expect(shown.revisions.map((r) => [r.revision, r.text])).toEqual([
      [1, TEXTS[0]],
      [2, TEXTS[1]],
      [3, TEXTS[2]]
    ])
    // Each listed revision's context id answers that revision's text, not the current one.
    const contexts = await Promise.all(shown.revisions.map((r) => h.blctx(["context", r.context_id])))
    expect(
      contexts.map((c) => {
        const answer = JSON.parse(c.stdout) as {
          messages: ReadonlyArray<{ text: string; source: { revision: number; revisions: number } }>
        }
        return answer.messages.map((m) => [m.text, m.source.revision, m.source.revisions])
      })
    ).toEqual([[[TEXTS[0], 1, 3]], [[TEXTS[1], 2, 3]], [[TEXTS[2], 3, 3]]])
    const pretty = await h.blctx(["notes", "history", logged.note_id, "--pretty"])
    expect(pretty.code, pretty.stderr).toBe(0)
    expect(pretty.stdout).toContain("revision 3 (current)")
    expect(pretty.stdout).toContain(TEXTS[0])

    // An unknown note: exit 1, a JSON error; a malformed id: a usage error before the daemon.
    const missing = randomUUID()
    const absent = await h.blctx(["notes", "show", missing])
    expect(absent.code).toBe(1)
    expect(JSON.parse(absent.stdout)).toMatchObject({ error: { _tag: "UnknownNote" }, exit_code: 1 })
    expect(absent.stderr).toContain(missing)
    const malformed = await h.blctx(["notes", "history", "not-a-note", "--json"])
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toContain("not a UUID")
  })

  it.skipIf(modelData() === undefined)(
    "with the tiny model (BLCTX_TEST_MODEL_DATA): the new revision's vector replaces the old one's",
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
        const { logged } = await threeRevisions(mcp)
        await waitFor("the revision's vector", async () => {
          const s = structured<{ authored_updates_pending: number; query_mode: string }>(
            await mcp.call("context_status")
          )
          return s.authored_updates_pending === 0 && s.query_mode === "hybrid" ? s : undefined
        })
        // The first revision's own words, by meaning too: only the current revision comes back.
        const found = structured<Search>(await mcp.call("search", { query: TEXTS[0] }))
        expect(found.query_mode).toBe("hybrid")
        expect(found.results.map((r) => [r.text, r.source.revision])).toEqual([[TEXTS[2], 3]])
        expect(found.results[0]?.source.note_id).toBe(logged.note_id)
      } finally {
        await server.close()
      }
    },
    300_000
  )
})
