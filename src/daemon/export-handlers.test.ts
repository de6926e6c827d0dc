import { randomUUID } from "node:crypto"
import * as NodePath from "node:path"
import type { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Stream } from "effect"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { importBatches, readExportFile } from "../export/export-file.js"
import { ImportNotesResponse } from "../export/import-contract.js"
import type { JobId } from "../jobs/job.js"
import { contentHash } from "../notes/note-content.js"
import {
  EXPORT_START,
  type ExportCursor,
  type ExportFilters,
  type ExportItem,
  type ExportLine,
  type ExportPageResponse,
  encodeExportLine,
  type NoteRevisionLine
} from "../retrieval/export-format.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { fakeModelFactory, inProcessClientWith } from "./daemon-core.test-support.js"

// ExportPage and ImportNotes, answered by the handlers blctxd serves, in process: two daemons
// over two fresh homes, notes (one with three revisions) exported from the first and restored in
// the second with their whole history, idempotently.

type Client = Effect.Effect.Success<ReturnType<typeof inProcessClientWith>>["client"]

const fixture = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "codex", "new-format-turn-ids.jsonl")

const onDisk = <A>(database: string, read: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: false }))
      return yield* read(sql)
    })
  ).pipe(Effect.provide(SqliteOpenerLive), Effect.orDie)

const importTranscript = (client: Client) =>
  Effect.gen(function* () {
    const submitted = yield* client.SubmitJob({ kind: "import", params: { paths: [fixture] } })
    const id: JobId = submitted.job.id
    while (true) {
      const job = yield* client.JobStatus({ job_id: id })
      if (job.state !== "queued" && job.state !== "running") return job
      yield* Effect.sleep(Duration.millis(20))
    }
  }).pipe(Effect.timeoutFail({ duration: Duration.minutes(2), onTimeout: () => new Error("import did not finish") }))

/** Every page of an export, as the CLI pages it (small pages, to cross phases and pages). */
const exportAll = (client: Client, filters: ExportFilters = {}) =>
  Effect.gen(function* () {
    const items: Array<ExportItem> = []
    let cursor: ExportCursor | null = EXPORT_START
    while (cursor !== null) {
      const page: ExportPageResponse = yield* client.ExportPage({ cursor, limit: 2, filters })
      items.push(...page.items)
      cursor = page.next_cursor
    }
    return items
  })

/** The file `blctx export` writes for these items. */
const fileOf = (items: ReadonlyArray<ExportItem>): ReadonlyArray<string> => {
  const revisions = items.filter((i): i is NoteRevisionLine => i.type === "note_revision")
  const lines: Array<ExportLine> = [
    {
      type: "header",
      format: "blctx-export",
      format_version: 1,
      schema_version: 7,
      exported_at: "2026-12-01T06:00:00.000Z",
      installation_id: randomUUID(),
      filters: {}
    },
    ...items,
    {
      type: "end",
      counts: {
        context_sessions: items.filter((i) => i.type === "context_session").length,
        notes: new Set(revisions.map((r) => r.note_id)).size,
        note_revisions: revisions.length,
        messages: items.filter((i) => i.type === "message").length
      }
    }
  ]
  return lines.map(encodeExportLine)
}

/** Restores a file in `client`'s daemon as `blctx import-notes` does, summing the answers. */
const importFile = (client: Client, lines: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const file = yield* readExportFile(Stream.fromIterable(lines), 7)
    const answers = yield* Effect.forEach(importBatches(file), (batch) => client.ImportNotes(batch))
    return new ImportNotesResponse({
      notes_imported: answers.reduce((n, a) => n + a.notes_imported, 0),
      revisions_imported: answers.reduce((n, a) => n + a.revisions_imported, 0),
      already_present: answers.reduce((n, a) => n + a.already_present, 0),
      forgotten: answers.reduce((n, a) => n + a.forgotten, 0),
      sessions_created: answers.reduce((n, a) => n + a.sessions_created, 0),
      sessions_mapped: answers.reduce((n, a) => n + a.sessions_mapped, 0),
      problems: answers.flatMap((a) => a.problems)
    })
  })

interface StoredRevision {
  readonly update_id: string
  readonly note_id: string
  readonly revision: number
  readonly session_id: string
  readonly kind: string
  readonly tags: string
  readonly source_text: string | null
  readonly content_sha256: string
  readonly created_at: string
  readonly text: string
  readonly timestamp: string
  readonly cwd: string | null
  readonly chunks: number
}

const revisionsIn = (database: string) =>
  onDisk(
    database,
    (sql) => sql<StoredRevision>`
      SELECT u.update_id, u.note_id, u.revision, u.session_id, u.kind, u.tags, u.source_text, u.content_sha256,
             u.created_at, m.text, m.timestamp, m.cwd,
             (SELECT count(*) FROM chunks c WHERE c.message_id = m.id) AS chunks
      FROM authored_updates u JOIN messages m ON m.note_id = u.note_id AND m.note_revision = u.revision
      ORDER BY u.note_id, u.revision`
  )

/** Waits, on what context_status says, until no note waits for a vector (a generous bound). */
const vectorsSettled = (client: Client) =>
  Effect.gen(function* () {
    while (true) {
      const status = yield* client.ContextStatus()
      if (status.authored_updates_pending === 0) return status
      yield* Effect.sleep(Duration.millis(50))
    }
  }).pipe(Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error("notes still pending") }))

/** Home A: a transcript, a parent and a child session, a note with three revisions and a plain one. */
const seedHome = (client: Client) =>
  Effect.gen(function* () {
    yield* importTranscript(client)
    const parent = yield* client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/shop-api" })
    const child = yield* client.OpenSession({ binding_key: randomUUID(), parent_session_id: parent.session_id })
    const revised = yield* client.LogUpdate({
      session_id: child.session_id,
      update_id: randomUUID(),
      text: "Cache invalidation: first idea, a TTL of one hour",
      tags: ["cache"],
      kind: "decision",
      source_text: "We will cache for an hour."
    })
    const second = yield* client.UpdateNote({
      note_id: revised.note_id,
      expected_revision: 1,
      text: "Cache invalidation: second idea, purge on write"
    })
    yield* client.UpdateNote({
      note_id: revised.note_id,
      expected_revision: second.revision,
      text: "Cache invalidation: settled on versioned keys",
      tags: ["cache", "settled"]
    })
    const plain = yield* client.LogUpdate({
      session_id: parent.session_id,
      update_id: randomUUID(),
      text: "Deploys go through the staging cluster first"
    })
    return { parent, child, revisedNote: revised.note_id, plainNote: plain.note_id }
  })

describe("export and import-notes, in process", () => {
  it.live("a note with its history goes from one installation to another; a second import adds nothing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const a = yield* inProcessClientWith({})
        const seeded = yield* seedHome(a.client)
        const items = yield* exportAll(a.client)

        // Sessions (parents first), then revisions by note, oldest first, then transcript messages.
        const types = items.map((i) => i.type)
        expect(types.indexOf("note_revision")).toBeGreaterThan(types.lastIndexOf("context_session"))
        expect(types.indexOf("message")).toBeGreaterThan(types.lastIndexOf("note_revision"))
        const sessions = items.flatMap((i) => (i.type === "context_session" ? [i.id] : []))
        expect(sessions).toEqual([seeded.parent.session_id, seeded.child.session_id])
        const revisions = items.filter((i): i is NoteRevisionLine => i.type === "note_revision")
        expect(revisions.filter((r) => r.note_id === seeded.revisedNote).map((r) => r.revision)).toEqual([1, 2, 3])
        expect(revisions).toHaveLength(4)
        const messages = items.filter((i) => i.type === "message")
        expect(messages.length).toBeGreaterThan(0)
        for (const m of messages) {
          if (m.type === "message") expect(m.source).toMatchObject({ kind: "transcript_span", path: fixture })
        }

        const b = yield* inProcessClientWith({})
        const first = yield* importFile(b.client, fileOf(items))
        expect(first).toMatchObject({
          notes_imported: 2,
          revisions_imported: 4,
          already_present: 0,
          forgotten: 0,
          sessions_created: 2,
          sessions_mapped: 0,
          problems: []
        })

        // The same rows, ids, times and hashes; chunks only on each note's current revision.
        const inA = yield* revisionsIn(a.paths.database)
        const inB = yield* revisionsIn(b.paths.database)
        expect(inB).toEqual(inA)
        expect(inB.filter((r) => r.note_id === seeded.revisedNote).map((r) => r.chunks)).toEqual([0, 0, 1])
        const parents = yield* onDisk(
          b.paths.database,
          (sql) => sql<{ id: string; parent_session_id: string | null }>`
            SELECT id, parent_session_id FROM context_sessions ORDER BY created_at, id`
        )
        expect(parents).toContainEqual({ id: seeded.child.session_id, parent_session_id: seeded.parent.session_id })
        // Transcript rows are not restored from the export: the transcript rebuilds them.
        const transcriptRows = yield* onDisk(
          b.paths.database,
          (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM messages WHERE source_file_id IS NOT NULL`
        )
        expect(transcriptRows[0]?.n).toBe(0)

        // Search finds the current text, not a superseded one; history is all there.
        const found = yield* b.client.Search({ query: "versioned keys" })
        expect(found.results.map((r) => r.source)).toContainEqual(
          expect.objectContaining({ kind: "note_revision", note_id: seeded.revisedNote, revision: 3 })
        )
        expect((yield* b.client.Search({ query: "TTL hour" })).results).toHaveLength(0)
        const history = yield* b.client.NoteHistory({ note_id: seeded.revisedNote })
        expect(history.revisions.map((r) => r.revision)).toEqual([1, 2, 3])

        // Again: nothing added.
        const second = yield* importFile(b.client, fileOf(items))
        expect(second).toMatchObject({
          notes_imported: 0,
          revisions_imported: 0,
          already_present: 4,
          sessions_created: 0
        })
        expect(yield* revisionsIn(b.paths.database)).toEqual(inA)
      })
    )
  )

  it.live("conflicts and altered lines are refused with their line; a note is restored whole or not at all", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const a = yield* inProcessClientWith({})
        const seeded = yield* seedHome(a.client)
        const items = yield* exportAll(a.client)
        const b = yield* inProcessClientWith({})
        yield* importFile(b.client, fileOf(items))

        // The same update id with other (validly hashed) content: a conflict, nothing overwritten.
        const altered = items.map((i) => {
          if (i.type !== "note_revision" || i.note_id !== seeded.plainNote) return i
          const changed = { ...i, text: "Deploys skip staging" }
          return { ...changed, content_sha256: contentHash(changed) }
        })
        const conflict = yield* importFile(b.client, fileOf(altered))
        expect(conflict.problems).toEqual([
          expect.objectContaining({ kind: "conflict", note_id: seeded.plainNote, revision: 1 })
        ])
        expect(conflict.problems[0]?.reason).toContain("other content")
        expect(conflict.problems[0]?.line).toBe(
          fileOf(altered).findIndex((l) => l.includes("Deploys skip staging")) + 1
        )
        expect((yield* b.client.Search({ query: "staging" })).results[0]?.text).toContain("staging cluster first")

        // A fresh home: a line whose hash is not its content is refused, and its note's other
        // (valid) revisions are held back.
        const c = yield* inProcessClientWith({})
        const tampered = items.map((i) =>
          i.type === "note_revision" && i.note_id === seeded.revisedNote && i.revision === 2
            ? { ...i, text: "tampered" }
            : i
        )
        const refused = yield* importFile(c.client, fileOf(tampered))
        expect(refused.problems.map((p) => [p.kind, p.revision])).toEqual([
          ["refused", 2],
          ["held_back", 1],
          ["held_back", 3]
        ])
        expect(refused.revisions_imported).toBe(1)
        const inC = yield* revisionsIn(c.paths.database)
        expect(inC.map((r) => r.note_id)).toEqual([seeded.plainNote])
      })
    )
  )

  it.live("a forgotten note is not restored; a binding this installation has maps the session", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const a = yield* inProcessClientWith({})
        const seeded = yield* seedHome(a.client)
        const items = yield* exportAll(a.client)

        const b = yield* inProcessClientWith({})
        yield* onDisk(b.paths.database, (sql) =>
          Effect.gen(function* () {
            const [tombstone] = yield* sql<{
              id: number
            }>`INSERT INTO forget_tombstones (selector, counts, forgotten_at)
              VALUES ('{}', '{}', '2026-12-01T00:00:00Z') RETURNING id`
            yield* sql`INSERT INTO forgotten_notes (note_id, tombstone_id) VALUES (${seeded.revisedNote}, ${tombstone?.id ?? 0})`
          })
        )
        // B already has the parent's binding, under its own session id.
        const mine = yield* b.client.OpenSession({ binding_key: seeded.parent.binding_key, project: "/srv/elsewhere" })
        const restored = yield* importFile(b.client, fileOf(items))
        expect(restored).toMatchObject({ forgotten: 3, revisions_imported: 1, sessions_mapped: 1, problems: [] })
        const inB = yield* revisionsIn(b.paths.database)
        expect(inB.map((r) => [r.note_id, r.session_id, r.cwd])).toEqual([
          [seeded.plainNote, mine.session_id, "/srv/elsewhere"]
        ])
        // The hash is over what is stored here (its session), as log_update's is.
        const again = yield* importFile(b.client, fileOf(items))
        expect(again).toMatchObject({ forgotten: 3, revisions_imported: 0, already_present: 1, problems: [] })
      })
    )
  )

  it.live("a newer export extends a restored note: the old current revision loses its chunks and vectors", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const a = yield* inProcessClientWith({ factory: fakeModelFactory().layer, vectorReads: true })
        const session = yield* a.client.OpenSession({ binding_key: randomUUID() })
        const logged = yield* a.client.LogUpdate({
          session_id: session.session_id,
          update_id: randomUUID(),
          text: "Queue workers poll every five seconds"
        })
        const before = fileOf(yield* exportAll(a.client))
        yield* a.client.UpdateNote({
          note_id: logged.note_id,
          expected_revision: 1,
          text: "Queue workers are woken by notifications"
        })
        const after = fileOf(yield* exportAll(a.client))

        const b = yield* inProcessClientWith({ factory: fakeModelFactory().layer, vectorReads: true })
        expect(yield* importFile(b.client, before)).toMatchObject({ revisions_imported: 1, problems: [] })
        const embedded = yield* vectorsSettled(b.client)
        expect(embedded.query_mode).toBe("hybrid")
        const extended = yield* importFile(b.client, after)
        expect(extended).toMatchObject({ revisions_imported: 1, already_present: 1, problems: [] })
        yield* vectorsSettled(b.client)
        expect((yield* revisionsIn(b.paths.database)).map((r) => [r.revision, r.chunks])).toEqual([
          [1, 0],
          [2, 1]
        ])
        // The first revision's vector left the index with its chunk; the new one has its own.
        const leftovers = yield* onDisk(
          b.paths.database,
          (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM removed_chunks`
        )
        expect(leftovers[0]?.n).toBe(0)
        const hits = yield* b.client.Search({ query: "queue workers" })
        expect(hits.query_mode).toBe("hybrid")
        expect(hits.results.map((h) => h.source)).toEqual([
          expect.objectContaining({ kind: "note_revision", note_id: logged.note_id, revision: 2 })
        ])
      })
    )
  )

  it.live("filters: a range keeps notes with a revision in it (whole), an agent keeps its transcripts", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const a = yield* inProcessClientWith({})
        const seeded = yield* seedHome(a.client)
        const future = yield* exportAll(a.client, { since: "2999-01-01" })
        expect(future).toEqual([])
        // Dated: the plain note in January 2020, the revised note's first revision in June 2020.
        yield* onDisk(a.paths.database, (sql) =>
          Effect.gen(function* () {
            yield* sql`UPDATE messages SET timestamp = '2020-01-01T00:00:00.000Z' WHERE note_id = ${seeded.plainNote}`
            yield* sql`UPDATE messages SET timestamp = '2020-06-01T00:00:00.000Z'
                       WHERE note_id = ${seeded.revisedNote} AND note_revision = 1`
          })
        )
        const notesIn = (items: ReadonlyArray<ExportItem>) =>
          items.flatMap((i) =>
            i.type === "note_revision" ? [`${i.note_id === seeded.plainNote ? "plain" : "revised"}@${i.revision}`] : []
          )
        // Any revision in the range brings the whole note; its sessions come with it.
        const june = yield* exportAll(a.client, { since: "2020-03-01", until: "2021-01-01" })
        expect(notesIn(june)).toEqual(["revised@1", "revised@2", "revised@3"])
        expect(june.filter((i) => i.type === "context_session")).toHaveLength(2)
        const year2020 = yield* exportAll(a.client, { until: "2021-01-01" })
        expect(notesIn(year2020).sort()).toEqual(["plain@1", "revised@1", "revised@2", "revised@3"])
        const recentOnly = yield* exportAll(a.client, { since: "2021-01-01" })
        expect(notesIn(recentOnly)).toEqual(["revised@1", "revised@2", "revised@3"])
        const january = yield* exportAll(a.client, { until: "2020-03-01" })
        expect(notesIn(january)).toEqual(["plain@1"])
        expect(january.flatMap((i) => (i.type === "context_session" ? [i.id] : []))).toEqual([seeded.parent.session_id])
        const claude = yield* exportAll(a.client, { agent: "claude" })
        expect(claude.filter((i) => i.type === "message")).toEqual([])
        expect(claude.filter((i) => i.type === "note_revision")).toHaveLength(4)
        const codex = yield* exportAll(a.client, { agent: "codex" })
        expect(codex.filter((i) => i.type === "message").length).toBeGreaterThan(0)
        const refused = yield* Effect.flip(a.client.ExportPage({ filters: { agent: "cursor" } }))
        expect(refused._tag).toBe("InvalidQuery")
        const badDate = yield* Effect.flip(a.client.ExportPage({ filters: { since: "yesterday" } }))
        expect(badDate._tag).toBe("InvalidQuery")
      })
    )
  )
})
