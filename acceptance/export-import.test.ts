import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { BlctxClient } from "../src/rpc/client.js"
import { type DaemonHome, makeDaemonHome } from "./support/daemon-harness.js"
import { runProcess } from "./support/isolated-home.js"

// blctx export and blctx import-notes end to end: two isolated homes, each with its real daemon;
// notes logged (one revised twice) and a transcript indexed in the first, exported with the
// built CLI, restored in the second with their whole history, and a second import adds nothing.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")
const cli = NodePath.join(root, "dist", "programs", "cli.js")
const transcript = NodePath.join(root, "fixtures", "codex", "new-format-turn-ids.jsonl")

const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => { prepare(sql: string): { all(): Array<Record<string, unknown>> }; close(): void }

const query = (home: DaemonHome, sql: string) => {
  const db = new Database(home.database, { readonly: true })
  try {
    return db.prepare(sql).all()
  } finally {
    db.close()
  }
}

/** A note's every revision as stored: ids, times, hashes, text, and whether it carries chunks. */
const notesOf = (home: DaemonHome) =>
  query(
    home,
    `SELECT u.update_id, u.note_id, u.revision, u.session_id, u.kind, u.authorship, u.tags, u.source_text,
            u.content_sha256, u.created_at, m.text, m.cwd, m.timestamp,
            (SELECT count(*) FROM chunks c WHERE c.message_id = m.id) > 0 AS chunked
     FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
     ORDER BY u.note_id, u.revision`
  )

const homes: Array<DaemonHome> = []
afterEach(() => {
  for (const h of homes.splice(0)) h.dispose()
})

const installedHome = async () => {
  const h = makeDaemonHome("detached")
  homes.push(h)
  const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  return h
}

const withDaemonClient = async <A>(h: DaemonHome, use: (client: BlctxClient) => Effect.Effect<A, unknown>) => {
  const { withClient } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(withClient({ socketPath: h.socketPath, timeout: "30 seconds" }, use))
}

interface Summary {
  readonly notes_imported: number
  readonly revisions_imported: number
  readonly already_present: number
  readonly conflicts: number
  readonly forgotten: number
  readonly messages_skipped: number
  readonly sessions_created: number
  readonly messages_note: string
}

/** A shell word: the value in single quotes. */
const quoted = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`
const envPrefix = (env: NodeJS.ProcessEnv) =>
  Object.entries(env)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${quoted(v)}`)
    .join(" ")

describe("blctx export | blctx import-notes", () => {
  it("restores every note with its history in another home; the same export again adds nothing", async () => {
    const a = await installedHome()
    const index = await a.blctx(["index", "--wait", transcript, "--json"])
    expect(index.code, index.stdout + index.stderr).toBe(0)

    const seeded = await withDaemonClient(a, (client) =>
      Effect.gen(function* () {
        const parent = yield* client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/shop-api" })
        const child = yield* client.OpenSession({ binding_key: randomUUID(), parent_session_id: parent.session_id })
        const first = yield* client.LogUpdate({
          session_id: child.session_id,
          update_id: randomUUID(),
          text: "Rate limiting: a token bucket per client",
          kind: "decision",
          tags: ["limits"]
        })
        const second = yield* client.UpdateNote({
          note_id: first.note_id,
          expected_revision: 1,
          text: "Rate limiting: a token bucket per API key"
        })
        yield* client.UpdateNote({
          note_id: first.note_id,
          expected_revision: second.revision,
          text: "Rate limiting: sliding window per API key, 100 requests a minute"
        })
        const other = yield* client.LogUpdate({
          session_id: parent.session_id,
          update_id: randomUUID(),
          text: "Migrations run before the deploy, never during it",
          source_text: "Run migrations first."
        })
        return { revised: first.note_id, other: other.note_id }
      })
    )

    // Export: JSON lines on stdout, a header and an end line, never the raw transcript.
    const exported = await a.blctx(["export"])
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stderr).toBe("")
    const lines = exported.stdout.trimEnd().split("\n")
    const parsed = lines.map((l) => JSON.parse(l) as { type: string; [k: string]: unknown })
    expect(parsed[0]).toMatchObject({
      type: "header",
      format: "blctx-export",
      format_version: 1,
      installation_id: a.installationId()
    })
    expect(parsed.at(-1)).toEqual({
      type: "end",
      counts: {
        context_sessions: 2,
        notes: 2,
        note_revisions: 4,
        messages: parsed.filter((p) => p.type === "message").length
      }
    })
    expect(parsed.filter((p) => p.type === "message").length).toBeGreaterThan(0)
    const raw = new Set(
      Fs.readFileSync(transcript, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
    )
    for (const line of lines) expect(raw.has(line)).toBe(false)
    const file = NodePath.join(a.home, "export.jsonl")
    Fs.writeFileSync(file, exported.stdout)

    // Import into another home: every note with every revision, ids and times kept.
    const b = await installedHome()
    const restored = await b.blctx(["import-notes", file])
    expect(restored.code, restored.stdout + restored.stderr).toBe(0)
    const summary = JSON.parse(restored.stdout) as Summary
    expect(summary).toMatchObject({
      notes_imported: 2,
      revisions_imported: 4,
      already_present: 0,
      conflicts: 0,
      forgotten: 0,
      sessions_created: 2,
      messages_skipped: parsed.filter((p) => p.type === "message").length
    })
    expect(summary.messages_note).toContain("blctx index")
    const inA = notesOf(a)
    expect(inA).toHaveLength(4)
    expect(notesOf(b)).toEqual(inA)
    // Chunks (what search finds) only on each note's current revision.
    const shape = notesOf(b)
      .map((n) => `${n.note_id === seeded.revised ? "revised" : "other"}@${n.revision}:${n.chunked}`)
      .sort()
    expect(shape).toEqual(["other@1:1", "revised@1:0", "revised@2:0", "revised@3:1"])
    expect(query(b, "SELECT count(*) AS n FROM messages WHERE source_file_id IS NOT NULL")).toEqual([{ n: 0 }])

    // The daemon finds the restored notes: the current text, and the whole history.
    const search = await b.blctx(["search", "sliding", "window", "--json"])
    const hits = (JSON.parse(search.stdout) as { results: Array<{ source: { note_id?: string; revision?: number } }> })
      .results
    expect(hits[0]?.source).toMatchObject({ note_id: seeded.revised, revision: 3 })
    const history = await withDaemonClient(b, (client) => client.NoteHistory({ note_id: seeded.revised }))
    expect(history.revisions.map((r) => r.revision)).toEqual([1, 2, 3])

    // The same file again: nothing added.
    const again = await b.blctx(["import-notes", file])
    expect(again.code, again.stdout + again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ notes_imported: 0, revisions_imported: 0, already_present: 4 })
    expect(notesOf(b)).toEqual(inA)

    // A shell pipe into a third home: blctx export | blctx import-notes -
    const c = await installedHome()
    const piped = await runProcess(
      "sh",
      [
        "-c",
        `${envPrefix(a.env)} ${quoted(process.execPath)} ${quoted(cli)} export | ${quoted(process.execPath)} ${quoted(cli)} import-notes -`
      ],
      { env: c.env }
    )
    expect(piped.code, piped.stdout + piped.stderr).toBe(0)
    expect(JSON.parse(piped.stdout)).toMatchObject({ notes_imported: 2, revisions_imported: 4 })
    expect(notesOf(c)).toEqual(inA)
  })

  it("a file cut short, or not a regular file, imports nothing and names the problem", async () => {
    const a = await installedHome()
    await withDaemonClient(a, (client) =>
      Effect.gen(function* () {
        const session = yield* client.OpenSession({ binding_key: randomUUID() })
        yield* client.LogUpdate({
          session_id: session.session_id,
          update_id: randomUUID(),
          text: "Keep the cache warm"
        })
      })
    )
    const exported = await a.blctx(["export"])
    expect(exported.code, exported.stderr).toBe(0)
    const lines = exported.stdout.trimEnd().split("\n")
    const cut = NodePath.join(a.home, "cut.jsonl")
    Fs.writeFileSync(cut, `${lines.slice(0, -1).join("\n")}\n`)

    const b = await installedHome()
    const truncated = await b.blctx(["import-notes", cut])
    expect(truncated.code).toBe(1)
    expect(truncated.stderr).toContain(`line ${lines.length}:`)
    expect(truncated.stderr).toContain("cut short")
    expect(query(b, "SELECT count(*) AS n FROM authored_updates")).toEqual([{ n: 0 }])

    const link = NodePath.join(a.home, "link.jsonl")
    Fs.symlinkSync(cut, link)
    const linked = await b.blctx(["import-notes", link])
    expect(linked.code).toBe(1)
    expect(linked.stderr).toContain("symbolic link")

    // A bad filter fails before anything is written: stdout stays empty.
    const bad = await a.blctx(["export", "--since", "yesterday"])
    // A time blctx cannot read is a usage error, found before the daemon is asked.
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe("")
    expect(bad.stderr).toContain("yesterday")
  })
})
