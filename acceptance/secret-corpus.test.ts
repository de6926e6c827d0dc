import { createHash, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { REDACTION_RULES_VERSION, redactSecrets } from "../src/redaction/redact.js"
import { RULES_VERSION_KEY } from "../src/redaction/rules-version.js"
import { corpusShapes, SECRET_CORPUS, secretFragments } from "../src/redaction/secret-corpus.js"
import {
  CORPUS_PROJECT,
  CORPUS_WORD,
  type Survivor,
  survivorsIn,
  writeCorpusTranscripts
} from "../src/redaction/secret-corpus.test-support.js"
import { type DaemonHome, eachConcurrently, makeDaemonHome, waitFor } from "./support/daemon-harness.js"
import { type McpSession, mcpArgs, startMcp, structured } from "./support/mcp-client.js"
import { modelData, serveTinyModel, useTinyModel } from "./support/model-server.js"

interface SqliteDatabase {
  prepare(sql: string): {
    all(...params: ReadonlyArray<unknown>): Array<Record<string, unknown>>
    run(...params: ReadonlyArray<unknown>): unknown
  }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly?: boolean }
) => SqliteDatabase

let home: DaemonHome | undefined
let mcp: McpSession | undefined
afterEach(async () => {
  await mcp?.close()
  mcp = undefined
  home?.dispose()
  home = undefined
})

type Place = { readonly where: string; readonly content: string | Buffer }

const run = async (h: DaemonHome, args: ReadonlyArray<string>) => {
  const result = await h.blctx(args)
  expect(result.code, `${args.join(" ")}: ${result.stderr}${result.stdout}`).toBe(0)
  return result
}

const json = async <A>(h: DaemonHome, args: ReadonlyArray<string>) => JSON.parse((await run(h, args)).stdout) as A

interface Paged {
  readonly next_offset: number | null
}
interface SearchAnswer extends Paged {
  readonly results: ReadonlyArray<{ readonly context_id: string; readonly session_id: string; readonly text: string }>
}
interface RecentAnswer extends Paged {
  readonly turns: ReadonlyArray<{ readonly project: string | null; readonly messages: ReadonlyArray<unknown> }>
}
interface ContextAnswer extends Paged {
  readonly next_char_offset: number | null
  readonly messages: ReadonlyArray<unknown>
}

/** Every page of a paged command, JSON and `--pretty`, as places to look in. */
const allPages = async <A extends Paged>(h: DaemonHome, args: ReadonlyArray<string>, places: Array<Place>) => {
  const pages: Array<A> = []
  for (let offset: number | null = 0; offset !== null; ) {
    const [page, pretty]: [A, { stdout: string }] = await Promise.all([
      json<A>(h, [...args, "--offset", String(offset)]),
      run(h, [...args, "--offset", String(offset), "--pretty"])
    ])
    pages.push(page)
    places.push(
      { where: `${args[0]} json`, content: JSON.stringify(page) },
      { where: `${args[0]} --pretty`, content: pretty.stdout }
    )
    offset = page.next_offset
  }
  return pages
}

/** Every table of the database, and the raw bytes of the file and its write-ahead log. */
const databasePlaces = (h: DaemonHome, places: Array<Place>) => {
  const db = new Database(h.database, { readonly: true })
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((r) => String(r.name))
    for (const table of tables) {
      places.push({ where: `table ${table}`, content: JSON.stringify(db.prepare(`SELECT * FROM "${table}"`).all()) })
    }
    return tables
  } finally {
    db.close()
  }
}

const fileBytes = (h: DaemonHome, places: Array<Place>) => {
  for (const file of [h.database, `${h.database}-wal`]) {
    if (Fs.existsSync(file)) places.push({ where: file.slice(h.home.length), content: Fs.readFileSync(file) })
  }
}

/** Every regular file under the folders blctx writes (data, state, cache), as bytes. */
const folderFiles = (h: DaemonHome, places: Array<Place>) => {
  const walk = (dir: string): void => {
    if (!Fs.existsSync(dir)) return
    for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
      const path = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) places.push({ where: path.slice(h.home.length), content: Fs.readFileSync(path) })
    }
  }
  for (const dir of [h.xdg.data, h.xdg.state, h.xdg.cache]) walk(dir)
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/**
 * Turns an indexed corpus back into what the rules before `REDACTION_RULES_VERSION` stored: the
 * samples those rules kept (`since`) as written, in messages, chunks and session cwds, and no
 * rules version. Run with the daemon stopped. Returns the samples put back.
 */
const asStoredByOlderRules = (h: DaemonHome) => {
  const newer = SECRET_CORPUS.filter((s) => (s.since ?? 1) === REDACTION_RULES_VERSION)
  const db = new Database(h.database)
  try {
    const messages = SECRET_CORPUS.filter((s) => s.where === "message")
    for (const sample of newer) {
      if (sample.where === "cwd") {
        const stored = redactSecrets(sample.text).text
        db.prepare("UPDATE sessions SET cwd = ? WHERE cwd = ?").run(sample.text, stored)
        db.prepare("UPDATE messages SET cwd = ? WHERE cwd = ?").run(sample.text, stored)
        continue
      }
      const raw = `${CORPUS_WORD} ${messages.indexOf(sample)}: ${sample.text}`
      const stored = redactSecrets(raw).text
      const rows = db.prepare("SELECT id FROM messages WHERE text = ?").all(stored)
      expect(rows.length, sample.shape).toBeGreaterThanOrEqual(1)
      for (const { id } of rows) {
        db.prepare("UPDATE messages SET text = ?, text_sha256 = ? WHERE id = ?").run(raw, sha256(raw), id)
        db.prepare("UPDATE chunks SET text = ?, char_end = ? WHERE message_id = ?").run(raw, raw.length, id)
      }
    }
    db.prepare("DELETE FROM meta WHERE key = ?").run(RULES_VERSION_KEY)
  } finally {
    db.close()
  }
  return newer
}

const metaVersion = (h: DaemonHome) => {
  const db = new Database(h.database, { readonly: true })
  try {
    return db.prepare("SELECT value FROM meta WHERE key = ?").all(RULES_VERSION_KEY)[0]?.value
  } finally {
    db.close()
  }
}

describe("the secret corpus, end to end", () => {
  it("indexes Codex transcripts full of secrets: no shape survives in any output or in the database files", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    const { files, messages } = writeCorpusTranscripts(h.codexHome)

    const indexed = await json<{ job: { state: string; counts: Record<string, number> } }>(h, [
      "index",
      "--root",
      h.codexHome,
      "--wait"
    ])
    expect(indexed.job.state).toBe("completed")
    expect(indexed.job.counts.messages_added).toBe(messages)
    // Each sample is at least one redaction: in a message, or in its session's metadata (a cwd).
    const { redactions = 0, metadata_redactions = 0 } = indexed.job.counts
    expect(redactions + metadata_redactions).toBeGreaterThanOrEqual(SECRET_CORPUS.length)

    const places: Array<Place> = []

    // search: every message (each holds the corpus word), then every fragment of every secret.
    const found = (await allPages<SearchAnswer>(h, ["search", CORPUS_WORD, "--limit", "100"], places)).flatMap(
      (p) => p.results
    )
    expect(found.length).toBe(messages)
    const fragments = [...new Set(SECRET_CORPUS.flatMap((s) => s.secrets.flatMap(secretFragments)))]
    const bySecret = await json<SearchAnswer>(h, ["search", ...fragments, "--limit", "100"])
    // (The answer echoes the query, which is made of the fragments: only its results count.)
    places.push({ where: "search for the secrets", content: JSON.stringify(bySecret.results) })
    expect(bySecret.results).toEqual([])

    // recent: every turn, with its project (the session's cwd).
    const turns = (await allPages<RecentAnswer>(h, ["recent", "--limit", "200"], places)).flatMap((p) => p.turns)
    expect(turns.reduce((n, t) => n + t.messages.length, 0)).toBe(messages)

    // context: every session from its first message, paged by messages and characters.
    const anchors = new Map(found.map((r) => [r.session_id, r.context_id]))
    expect(anchors.size).toBe(files.length)
    // (Sessions and files are read a few at a time: each read is its own CLI process.)
    const sessionMessages = await eachConcurrently([...anchors.values()], async (anchor) => {
      let count = 0
      let next: { offset: number; char: number } | null = { offset: 0, char: 0 }
      while (next !== null) {
        const args: Array<string> = [
          "context",
          anchor,
          "--offset",
          String(next.offset),
          "--char-offset",
          String(next.char)
        ]
        const [page, pretty]: [ContextAnswer, { stdout: string }] = await Promise.all([
          json<ContextAnswer>(h, [...args, "--limit", "200"]),
          run(h, [...args, "--limit", "200", "--pretty"])
        ])
        places.push(
          { where: "context json", content: JSON.stringify(page) },
          { where: "context --pretty", content: pretty.stdout }
        )
        count += page.next_char_offset === null ? page.messages.length : page.messages.length - 1
        next = page.next_offset === null ? null : { offset: page.next_offset, char: page.next_char_offset ?? 0 }
      }
      return count
    })
    expect(sessionMessages.reduce((a, b) => a + b, 0)).toBe(messages)

    // explore: the searchable view of each file, as JSON and as text.
    const views = files.flatMap((file) =>
      [[], ["--view", "preview", "--details"]].flatMap((view) => {
        const args = ["explore", file, ...view, "--limit", "1000"]
        return [
          { where: `explore ${view.join(" ")} --json`, args: [...args, "--json"] },
          { where: `explore ${view.join(" ")} text`, args: [...args, "--no-color"] }
        ]
      })
    )
    for (const [i, result] of (await eachConcurrently(views, (v) => run(h, v.args))).entries()) {
      places.push({ where: views[i]?.where ?? "explore", content: result.stdout })
    }

    // The database: every table and the FTS index, read after the job committed; then the raw
    // bytes of context.db and its write-ahead log, where the committed pages live until a checkpoint.
    const db = new Database(h.database, { readonly: true })
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all()
        .map((r) => String(r.name))
      expect(tables).toContain("chunks_fts")
      for (const table of tables) {
        places.push({ where: `table ${table}`, content: JSON.stringify(db.prepare(`SELECT * FROM "${table}"`).all()) })
      }
      places.push({
        where: "chunks_fts content",
        content: JSON.stringify(db.prepare("SELECT text FROM chunks_fts").all())
      })
      const match = db.prepare("SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?")
      expect(match.all(`"${CORPUS_WORD}"`)[0]?.n).toBe(messages)
      for (const sample of SECRET_CORPUS) {
        for (const fragment of sample.secrets.flatMap(secretFragments)) {
          if (Number(match.all(`"${fragment}"`)[0]?.n) > 0) {
            places.push({ where: "chunks_fts index", content: fragment })
          }
        }
      }
    } finally {
      db.close()
    }
    const read: Array<string> = []
    for (const file of [h.database, `${h.database}-wal`]) {
      if (!Fs.existsSync(file)) continue
      const bytes = Fs.readFileSync(file)
      read.push(`${file.slice(file.lastIndexOf("/") + 1)} (${bytes.length} bytes)`)
      places.push({ where: file.slice(h.home.length), content: bytes })
    }
    expect(read[0]).toMatch(/^context\.db /)
    console.log(`database files read: ${read.join(", ")}`)

    const survivors: ReadonlyArray<Survivor> = survivorsIn(places)
    const shapes = corpusShapes()
    const surviving = [...new Set(survivors.map((s) => s.shape))]
    console.log(`secret corpus: ${shapes.length} shapes tried, ${surviving.length} surviving`)
    expect(shapes.length).toBe(SECRET_CORPUS.length)
    expect(surviving, JSON.stringify(survivors.slice(0, 20), null, 2)).toEqual([])

    // What is left is still useful: the text around each secret, and the rest of each project path.
    expect(found.map((r) => r.text)).toContainEqual(
      expect.stringContaining("postgres://shop:[REDACTED:url_credentials]@db.internal.example:5432/shop")
    )
    const projects = new Set(turns.map((t) => t.project))
    expect(projects).toContain(CORPUS_PROJECT)
    expect(projects).toContain("/home/dev/clones/[REDACTED:github_token]/api")
  }, 300_000)

  it("keeps every shape out of notes: log_update and update_note through MCP, then search, notes, export and the files", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const data = modelData()
    const server = data === undefined ? undefined : await serveTinyModel(data)
    try {
      // With the tiny model (BLCTX_TEST_MODEL_DATA), notes are embedded too: vectors are numbers,
      // and the rows beside them are read below like every other table.
      if (server !== undefined && data !== undefined) useTinyModel(h, data, server)
      const steps = server === undefined ? ["service_health"] : ["embedding_model", "service_health"]
      for (const step of steps) {
        const install = await h.blctx(["install", "codex", "--step", step, "--json"])
        expect(install.code, install.stdout + install.stderr).toBe(0)
      }
      mcp = await startMcp({
        args: mcpArgs(h),
        env: { HOME: h.home, PATH: process.env.PATH ?? "", BLCTX_SERVICE_MANAGER: "detached" },
        cwd: h.home
      })
      const session = structured<{ context_session_id: string }>(
        await mcp.call("open_session", { binding_key: randomUUID(), project: CORPUS_PROJECT })
      )
      const places: Array<Place> = []
      const notes: Array<string> = []
      for (const [i, sample] of SECRET_CORPUS.entries()) {
        const logged = structured<{ note_id: string }>(
          await mcp.call("log_update", {
            session_id: session.context_session_id,
            update_id: randomUUID(),
            text: `${CORPUS_WORD} note ${i}: ${sample.text}`,
            kind: "decision"
          })
        )
        places.push({ where: `log_update answer ${i}`, content: JSON.stringify(logged) })
        notes.push(logged.note_id)
      }
      // A second revision of the first note carries the last sample: both revisions are kept.
      const last = SECRET_CORPUS[SECRET_CORPUS.length - 1]
      const revised = await mcp.call("update_note", {
        note_id: notes[0],
        expected_revision: 1,
        text: `${CORPUS_WORD} revised: ${last?.text ?? ""}`
      })
      places.push({ where: "update_note answer", content: JSON.stringify(structured(revised)) })

      for (const tool of ["search", "recent"] as const) {
        const args = tool === "search" ? { query: CORPUS_WORD, limit: 50 } : { limit: 50 }
        places.push({ where: `mcp ${tool}`, content: JSON.stringify(structured(await mcp.call(tool, args))) })
      }
      for (const id of notes.slice(0, 5)) {
        places.push({
          where: `note_history ${id}`,
          content: JSON.stringify(structured(await mcp.call("note_history", { note_id: id })))
        })
      }
      const found = await json<SearchAnswer>(h, ["search", CORPUS_WORD, "--limit", "100"])
      expect(found.results.length).toBe(SECRET_CORPUS.length)
      places.push({ where: "blctx search", content: JSON.stringify(found.results) })
      places.push({ where: "blctx notes list", content: (await run(h, ["notes", "list"])).stdout })
      places.push({
        where: "blctx notes history",
        content: (await run(h, ["notes", "history", notes[0] ?? ""])).stdout
      })
      const exported = (await run(h, ["export"])).stdout
      expect(exported.split("\n").filter((l) => l.includes(CORPUS_WORD)).length).toBeGreaterThanOrEqual(
        SECRET_CORPUS.length
      )
      places.push({ where: "blctx export", content: exported })
      const tables = databasePlaces(h, places)
      fileBytes(h, places)

      const surviving = [...new Set(survivorsIn(places).map((s) => s.shape))]
      console.log(
        `secret corpus in notes: ${corpusShapes().length} shapes tried in ${SECRET_CORPUS.length} notes (${tables.length} tables, export, search, recent, note_history read), ${surviving.length} surviving`
      )
      expect(surviving).toEqual([])
    } finally {
      await server?.close()
    }
  }, 300_000)

  it("a database of the previous rules version: the daemon redacts it again at start, and no shape survives in any file of the data, state and cache folders", async () => {
    const h = makeDaemonHome("detached")
    home = h
    const install = await h.blctx(["install", "codex", "--step", "service_health", "--json"])
    expect(install.code, install.stdout + install.stderr).toBe(0)
    expect(metaVersion(h)).toBe(String(REDACTION_RULES_VERSION))
    writeCorpusTranscripts(h.codexHome)
    await json(h, ["index", "--root", h.codexHome, "--wait"])

    const [pid] = h.daemonPids()
    process.kill(pid as number, "SIGKILL")
    await waitFor("the killed daemon to be gone", () => (h.daemonPids().includes(pid as number) ? undefined : true))
    const newer = asStoredByOlderRules(h)
    const before: Array<Place> = []
    folderFiles(h, before)
    const stored = new Set(survivorsIn(before).map((s) => s.shape))
    expect(
      newer.filter((s) => !stored.has(s.shape)).map((s) => s.shape),
      "the older rules' database holds every newer shape"
    ).toEqual([])

    // The next start finds version 1 stored, and redacts again in the background.
    expect((await h.blctx(["ping", "--json"])).code).toBe(0)
    await waitFor("the rules version to be stored", () =>
      metaVersion(h) === String(REDACTION_RULES_VERSION) ? true : undefined
    )
    const status = await json<{
      jobs?: ReadonlyArray<{ kind: string; state: string; counts: Record<string, number> }>
    }>(h, ["index-status", "--json"])
    const places: Array<Place> = [{ where: "index-status", content: JSON.stringify(status) }]
    const fragments = [...new Set(newer.flatMap((s) => s.secrets.flatMap(secretFragments)))]
    const bySecret = await json<SearchAnswer>(h, ["search", ...fragments, "--limit", "100"])
    expect(bySecret.results).toEqual([])
    places.push({ where: "blctx export", content: (await run(h, ["export"])).stdout })
    folderFiles(h, places)
    const surviving = survivorsIn(places)
    console.log(
      `previous rules version: ${newer.length} newer shapes stored, ${places.length - 2} files read after redacting again, ${new Set(surviving.map((s) => s.shape)).size} surviving`
    )
    expect(surviving, JSON.stringify(surviving.slice(0, 20), null, 2)).toEqual([])
  }, 300_000)
})
