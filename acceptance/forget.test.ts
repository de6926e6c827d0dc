import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import {
  appendCodexTurn,
  filesHolding,
  type Turn,
  writeCodexSession
} from "../src/forget/forget-fixtures.test-support.js"
import type { BlctxClient } from "../src/rpc/client.js"
import { type DaemonHome, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { builtProgram, runProcess } from "./support/isolated-home.js"
import { type McpSession, mcpArgs, startMcp, structured, toolErrorOf } from "./support/mcp-client.js"

// `blctx forget` end to end: the real CLI and daemon in an isolated home. A preview removes
// nothing; --yes removes; no byte of the forgotten text stays in the data directory; indexing
// again does not restore it; a turn appended later is indexed; and a daemon killed while a forget
// is confirming leaves all of it or none, and scrubs at its next start.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")

interface SqliteDatabase {
  prepare(sql: string): {
    all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>>
    run(...params: ReadonlyArray<unknown>): unknown
  }
  close(): void
}
const require = createRequire(import.meta.url)
const Database = require("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean; readonly timeout?: number }
) => SqliteDatabase

const query = (home: DaemonHome, sql: string, ...params: ReadonlyArray<unknown>) => {
  const db = new Database(home.database, { readonly: true, timeout: 5_000 })
  try {
    return db.prepare(sql).all(...params)
  } finally {
    db.close()
  }
}

const withClient = async <A>(home: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "60 seconds" }), use))
  )
}

/** Polls `check` every few milliseconds (a kill must land close to the moment it watches for). */
const moment = async (what: string, check: () => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 2))
  }
}

let home: DaemonHome | undefined
const sessions: Array<McpSession> = []
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined)
  home?.dispose()
  home = undefined
})

const MARK = "Wqjforgetmark5150"
const SESSION = "0199d000-0000-7000-8000-0000000000f1"
const OTHER = "0199d000-0000-7000-8000-0000000000f2"

const started = async () => {
  const h = makeDaemonHome("detached")
  home = h
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  return h
}

const indexed = async (h: DaemonHome, paths: ReadonlyArray<string>) => {
  const result = await h.blctx(["index", ...paths, "--wait", "--json"])
  expect(result.code, result.stdout + result.stderr).toBe(0)
  return JSON.parse(result.stdout) as { job: { state: string; counts: Record<string, number> } }
}

/** Search through the protocol (the CLI's own search is covered elsewhere; a CLI start costs seconds on CI). */
const searchTexts = (h: DaemonHome, words: string) =>
  withClient(h, (c) => c.Search({ query: words, limit: 20 })).then((r) => r.results.map((hit) => hit.text))

/** Files of the data and state directories holding the marker in any case. */
const traces = (h: DaemonHome, marker: string) => [
  ...filesHolding(NodePath.join(h.xdg.data, "blctx"), marker),
  ...filesHolding(h.stateDir, marker)
]

/** The CLI on a pseudo-terminal (util-linux `script`), so it asks before forgetting; `answer` is typed in. */
const onTerminal = (h: DaemonHome, args: ReadonlyArray<string>, answer: string) =>
  runProcess("script", ["-qfec", [process.execPath, builtProgram("cli"), ...args].join(" "), "/dev/null"], {
    env: { ...h.env, TERM: "xterm" },
    input: answer
  })

interface Preview {
  counts: { messages: number; by_source: Record<string, { messages: number; sessions: number }> }
  token: string
}

describe("blctx forget", () => {
  it("previews without --yes (exit 1, nothing removed), forgets with it, leaves no byte of the marker, and stays forgotten", async () => {
    const h = await started()
    const turns: Array<Turn> = [
      {
        prompt: `Keep the launch code ${MARK} secret.`,
        answer: `Understood, ${MARK} stays here.`,
        at: "2026-03-01T10:00:00Z"
      },
      { prompt: "And the rollout plan?", answer: "Canary first, then everyone.", at: "2026-03-01T11:00:00Z" }
    ]
    const file = writeCodexSession(h.codexHome, SESSION, "/home/dev/launch", turns)
    const other = writeCodexSession(h.codexHome, OTHER, "/home/dev/other", [
      {
        prompt: "How are other releases cut?",
        answer: "Other releases are cut on Fridays.",
        at: "2026-03-02T10:00:00Z"
      }
    ])
    await indexed(h, [file, other])
    expect((await searchTexts(h, MARK)).length).toBe(2)

    // No TTY, no --yes: the preview on stdout, nothing removed, exit 1.
    const previewOnly = await h.blctx(["forget", "--session", SESSION])
    expect(previewOnly.code, previewOnly.stderr).toBe(1)
    expect(previewOnly.stderr).toContain("nothing removed: run again with --yes to forget this")
    const shown = JSON.parse(previewOnly.stdout) as { preview: Preview; forgotten: null }
    expect(shown.forgotten).toBeNull()
    expect(shown.preview.counts.by_source.codex_transcript?.messages).toBe(4)
    expect((await searchTexts(h, MARK)).length).toBe(2)

    // On a terminal it shows the preview and asks; answering no removes nothing (exit 1).
    const declined = await onTerminal(h, ["forget", "--session", SESSION], "n\n")
    expect(declined.code, declined.stdout).toBe(1)
    expect(declined.stdout).toContain(MARK)
    expect(declined.stdout).toContain("Forget all of this? It cannot be undone.")
    expect(declined.stdout).toContain("nothing removed")
    expect((await searchTexts(h, MARK)).length).toBe(2)

    // Two selector kinds at once is a usage error.
    const both = await h.blctx(["forget", "--session", SESSION, "--project", "/home/dev"])
    expect(both.code).toBe(2)

    const confirmed = await h.blctx(["forget", "--session", SESSION, "--yes"])
    expect(confirmed.code, confirmed.stderr).toBe(0)
    const done = JSON.parse(confirmed.stdout) as {
      preview: Preview
      forgotten: { counts: Preview["counts"]; scrubbed: boolean }
    }
    expect(done.forgotten.counts).toEqual(done.preview.counts)
    expect(done.forgotten.scrubbed).toBe(true)
    expect(await searchTexts(h, MARK)).toEqual([])
    expect(traces(h, MARK)).toEqual([])
    expect((await searchTexts(h, "other releases")).length).toBeGreaterThan(0)

    // Indexing the file again (touched, so it is read again) does not bring it back.
    Fs.utimesSync(file, new Date(), new Date(Date.now() + 10_000))
    const again = await indexed(h, [file])
    expect(again.job.counts.messages_added ?? 0).toBe(0)
    expect(again.job.counts.messages_forgotten).toBeGreaterThan(0)
    expect(await searchTexts(h, MARK)).toEqual([])
    expect(traces(h, MARK)).toEqual([])

    // A turn appended after the forget is indexed, and only it.
    appendCodexTurn(file, `${SESSION}-later`, {
      prompt: "A later question about quokkas",
      answer: "Quokkas live on Rottnest Island.",
      at: "2026-03-03T10:00:00Z"
    })
    const appended = await indexed(h, [file])
    expect(appended.job.counts.messages_added).toBe(2)
    expect((await searchTexts(h, "quokkas")).length).toBe(2)
    expect(await searchTexts(h, MARK)).toEqual([])
    expect(traces(h, MARK)).toEqual([])

    // On a terminal, answering yes forgets (here the appended turn, by its time).
    const accepted = await onTerminal(h, ["forget", "--since", "2026-03-03T00:00:00Z"], "y\n")
    expect(accepted.code, accepted.stdout).toBe(0)
    expect(accepted.stdout).toContain("Forget all of this? It cannot be undone.")
    expect(await searchTexts(h, "quokkas")).toEqual([])
    expect((await searchTexts(h, "other releases")).length).toBeGreaterThan(0)

    // The MCP tool: a call without a token previews, a wrong token removes nothing, the preview's token forgets.
    const mcp = await startMcp({
      args: mcpArgs(h),
      env: { HOME: h.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
      cwd: h.home
    })
    sessions.push(mcp)
    const selector = { session: OTHER }
    const previewed = structured<{ preview: Preview; forgotten: null }>(await mcp.call("forget", { selector }))
    expect(previewed.preview.counts.by_source.codex_transcript?.messages).toBe(2)
    const refused = toolErrorOf(await mcp.call("forget", { selector, token: `${Date.now()}.${"0".repeat(64)}` }))
    expect(refused).toMatchObject({ kind: "forget_token_mismatch", tool: "forget" })
    expect((await searchTexts(h, "other releases")).length).toBeGreaterThan(0)
    const viaMcp = structured<{ preview: null; forgotten: { counts: Preview["counts"] } }>(
      await mcp.call("forget", { selector, token: previewed.preview.token })
    )
    expect(viaMcp.forgotten.counts).toEqual(previewed.preview.counts)
    expect(await searchTexts(h, "other releases")).toEqual([])
  }, 120_000)

  it("a daemon killed while a forget confirms leaves all of it or none, and scrubs at its next start", async () => {
    const h = await started()
    const trials = 5
    const perSession = 200
    const files = Array.from({ length: trials }, (_, t) =>
      writeCodexSession(
        h.codexHome,
        `0199d000-0000-7000-8000-${String(t).padStart(12, "0")}`,
        `/home/dev/kill-${t}`,
        Array.from({ length: perSession }, (_, i) => ({
          prompt: `Trial ${t} question ${i} about ${MARK}t${t} and the weather in some detail.`,
          answer: `Trial ${t} answer ${i}: ${MARK}t${t} noted, with a sentence or two of padding text.`,
          at: new Date(Date.parse("2026-03-01T00:00:00Z") + i * 60_000).toISOString()
        }))
      )
    )
    await indexed(h, files)
    const markerRows = (t: number) =>
      Number(query(h, "SELECT count(*) AS n FROM messages WHERE text LIKE ?", `%${MARK}t${t}%`)[0]?.n ?? 0)
    const tombstones = () => query(h, "SELECT id, scrubbed_at FROM forget_tombstones ORDER BY id")
    const walBytes = () => {
      try {
        return Fs.statSync(`${h.database}-wal`).size
      } catch {
        return 0
      }
    }

    let committed = 0
    let pendingAtStart = 0
    for (let t = 0; t < trials; t++) {
      expect(markerRows(t)).toBe(2 * perSession)
      const before = tombstones().length
      const selector = { session: `0199d000-0000-7000-8000-${String(t).padStart(12, "0")}` }
      const preview = await withClient(h, (c) => c.ForgetPreview({ selector }))
      expect(preview.counts.messages).toBe(2 * perSession)
      const [pid] = h.daemonPids()
      expect(pid).toBeDefined()
      let answered = false
      const confirming = withClient(h, (c) => c.Forget({ selector, token: preview.token })).then(
        () => {
          answered = true
        },
        () => undefined
      )
      // Kill at varied moments, each an observed event: at once; once the WAL has grown (the
      // transaction writing) by 0 or 64 KiB; once the tombstone is committed (the scrub running);
      // and once the answer came (everything done). A fast machine may pass a moment before it is
      // seen: the answer ends every wait, and the assertions hold whatever moment the kill hit.
      const grown = walBytes() + (t === 2 ? 64 * 1024 : 0)
      await moment(`trial ${t}'s moment to kill`, () => {
        if (t === 0 || answered) return true
        if (t === 3) return tombstones().length > before
        if (t === 4) return false
        return walBytes() > grown
      })
      process.kill(pid as number, "SIGKILL")
      await confirming
      await waitFor("the killed daemon to be gone", () => (h.daemonPids().includes(pid as number) ? undefined : true))

      const after = tombstones()
      const rows = markerRows(t)
      if (after.length > before) {
        committed++
        expect(rows, `trial ${t}: tombstone committed, rows must be gone`).toBe(0)
        if (after.at(-1)?.scrubbed_at === null) pendingAtStart++
      } else {
        expect(rows, `trial ${t}: no tombstone, every row must remain`).toBe(2 * perSession)
      }
      // The next start scrubs whatever forget was not scrubbed.
      const ping = await h.blctx(["ping", "--json"])
      expect(ping.code, ping.stderr).toBe(0)
      await waitFor("every forget to be scrubbed", () =>
        tombstones().every((r) => r.scrubbed_at !== null) ? true : undefined
      )
      if (after.length > before) expect(traces(h, `${MARK}t${t}`)).toEqual([])
    }
    // The last trial kills after the answer: that forget was committed.
    expect(committed).toBeGreaterThanOrEqual(1)
    console.log(`kill trials: ${committed} of ${trials} committed, ${pendingAtStart} scrubbed at the next start`)

    // Whatever the trials hit: a forget committed but not scrubbed (as a kill between the two
    // leaves it) is scrubbed by the next daemon at its start.
    const [pid] = h.daemonPids()
    process.kill(pid as number, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (h.daemonPids().includes(pid as number) ? undefined : true))
    const db = new Database(h.database)
    db.prepare(
      "UPDATE forget_tombstones SET scrubbed_at = NULL WHERE id = (SELECT max(id) FROM forget_tombstones)"
    ).run()
    db.close()
    expect(tombstones().some((r) => r.scrubbed_at === null)).toBe(true)
    expect((await h.blctx(["ping", "--json"])).code).toBe(0)
    await waitFor("the pending scrub to run at start", () =>
      tombstones().every((r) => r.scrubbed_at !== null) ? true : undefined
    )
  }, 180_000)
})
