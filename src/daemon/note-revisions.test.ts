import { randomUUID } from "node:crypto"
import type { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node/SqliteClient"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { fakeModelFactory, type InProcessOptions, inProcessClientWith } from "./daemon-core.test-support.js"

// Revisions of notes (UpdateNote, NoteHistory, ListNotes) through the handlers blctxd serves, in
// process, on the same core layers: the writer connection, the job runner, the index watcher.

type Client = Effect.Effect.Success<ReturnType<typeof inProcessClientWith>>["client"]

const uuid = () => randomUUID()

/** Reads the database as it is on disk, on a connection of its own (what a query worker sees). */
const onDisk = <A>(database: string, read: (sql: SqliteClient) => Effect.Effect<A, unknown>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: true }))
      return yield* read(sql)
    })
  ).pipe(Effect.provide(SqliteOpenerLive), Effect.orDie)

const daemon = (options: InProcessOptions = {}) => inProcessClientWith(options)

/** A session and a logged note in it. */
const loggedNote = (client: Client, text: string, tags: ReadonlyArray<string> = ["deploy"]) =>
  Effect.gen(function* () {
    const session = yield* client.OpenSession({ binding_key: uuid(), project: "/home/dev/shop-api" })
    const logged = yield* client.LogUpdate({ session_id: session.session_id, update_id: uuid(), text, tags })
    return { session, logged }
  })

/** Waits, on what context_status says, until no note waits for a vector (a generous bound). */
const noNotePending = (client: Client) =>
  Effect.gen(function* () {
    while (true) {
      const status = yield* client.ContextStatus()
      if (status.authored_updates_pending === 0) return status
      yield* Effect.sleep(Duration.millis(50))
    }
  }).pipe(
    Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error("notes still pending") }),
    Effect.orDie
  )

const chunkTexts = (sql: SqlClient.SqlClient) =>
  sql<{ id: number; text: string; note_revision: number }>`
    SELECT c.id, c.text, m.note_revision FROM chunks c JOIN messages m ON m.id = c.message_id ORDER BY c.id`

describe("note revisions, in process", () => {
  it.live("a chain of revisions: each update from the current one; history lists every revision in order", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* daemon()
        const { session, logged } = yield* loggedNote(client, "Decision: deploys go out on Tuesdays.")
        const other = yield* client.OpenSession({ binding_key: uuid(), project: "/home/dev/shop-api" })

        const second = yield* client.UpdateNote({
          note_id: logged.note_id,
          expected_revision: 1,
          text: "Decision: deploys go out on Wednesdays."
        })
        expect(second).toMatchObject({
          note_id: logged.note_id,
          revision: 2,
          previous_revision: 1,
          created: true,
          kind: logged.kind,
          // Left out: the note's tags and its own session.
          tags: ["deploy"],
          session_id: session.session_id,
          authorship: "agent_generated",
          source_type: "authored_update"
        })
        expect(second.context_id).not.toBe(logged.context_id)

        const third = yield* client.UpdateNote({
          note_id: logged.note_id.toUpperCase(),
          expected_revision: 2,
          text: "Decision: deploys go out on Thursdays, after the freeze.",
          tags: ["deploy", "freeze"],
          session_id: other.session_id,
          authorship: "user_requested"
        })
        expect(third).toMatchObject({ revision: 3, previous_revision: 2, tags: ["deploy", "freeze"] })
        expect(third.session_id).toBe(other.session_id)

        const history = yield* client.NoteHistory({ note_id: logged.note_id })
        expect(history).toMatchObject({ note_id: logged.note_id, current_revision: 3, kind: "note" })
        expect(history.revisions.map((r) => [r.revision, r.text, r.session_id, r.authorship, r.tags])).toEqual([
          [1, "Decision: deploys go out on Tuesdays.", session.session_id, "agent_generated", ["deploy"]],
          [2, "Decision: deploys go out on Wednesdays.", session.session_id, "agent_generated", ["deploy"]],
          [
            3,
            "Decision: deploys go out on Thursdays, after the freeze.",
            other.session_id,
            "user_requested",
            ["deploy", "freeze"]
          ]
        ])
        expect(history.revisions.map((r) => r.update_id)[0]).toBe(logged.update_id)
        expect(history.revisions.map((r) => r.context_id)).toEqual([
          logged.context_id,
          second.context_id,
          third.context_id
        ])
        expect(history.revisions[2]?.created_at).toBe(third.created_at)

        // Only the current revision keeps chunks; every revision keeps its message.
        const stored = yield* onDisk(paths.database, (sql) =>
          Effect.all({
            chunks: chunkTexts(sql),
            messages: sql<{ n: number }>`SELECT count(*) AS n FROM messages WHERE note_id = ${logged.note_id}`
          })
        )
        expect(stored.chunks.map((c) => [c.note_revision, c.text])).toEqual([
          [3, "Decision: deploys go out on Thursdays, after the freeze."]
        ])
        expect(stored.messages).toEqual([{ n: 3 }])

        // The list shows the note once, at its current revision.
        const list = yield* client.ListNotes({})
        expect(list.notes).toHaveLength(1)
        expect(list.notes[0]).toMatchObject({
          note_id: logged.note_id,
          current_revision: 3,
          tags: ["deploy", "freeze"],
          session_id: other.session_id,
          project: "/home/dev/shop-api",
          excerpt: "Decision: deploys go out on Thursdays, after the freeze.",
          excerpt_truncated: false,
          created_at: logged.created_at,
          updated_at: third.created_at
        })
        expect((yield* client.ListNotes({ session_id: session.session_id })).notes).toEqual([])
        expect((yield* client.ListNotes({ project: "/home/dev/elsewhere" })).notes).toEqual([])
        expect((yield* client.ListNotes({ project: "/home/dev" })).notes).toHaveLength(1)
      })
    )
  )

  it.live("a stale expected_revision, an unknown note, an unknown session: refused, nothing written", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* daemon()
        const { logged } = yield* loggedNote(client, "Status: the cache is warmed at boot.")
        yield* client.UpdateNote({ note_id: logged.note_id, expected_revision: 1, text: "Status: warmed lazily." })

        const stale = yield* Effect.flip(
          client.UpdateNote({ note_id: logged.note_id, expected_revision: 1, text: "Status: warmed at boot again." })
        )
        expect(stale).toMatchObject({
          _tag: "StaleRevision",
          note_id: logged.note_id,
          expected_revision: 1,
          current_revision: 2
        })
        if (stale._tag === "StaleRevision") {
          expect(stale.message).toContain("revision 2")
          expect(stale.remediation).toContain("note_history")
          expect(stale.remediation).toContain("expected_revision 2")
        }

        const missing = uuid()
        const unknown = yield* Effect.flip(client.UpdateNote({ note_id: missing, expected_revision: 1, text: "x" }))
        expect(unknown).toMatchObject({ _tag: "UnknownNote", note_id: missing })
        const noHistory = yield* Effect.flip(client.NoteHistory({ note_id: missing }))
        expect(noHistory).toMatchObject({ _tag: "UnknownNote", note_id: missing })
        if (noHistory._tag === "UnknownNote") expect(noHistory.remediation).toContain("log_update")

        const nowhere = yield* Effect.flip(
          client.UpdateNote({ note_id: logged.note_id, expected_revision: 2, text: "y", session_id: uuid() })
        )
        expect(nowhere).toMatchObject({ _tag: "UnknownContextSession", field: "session_id" })

        const rows = yield* onDisk(
          paths.database,
          (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM authored_updates WHERE note_id = ${logged.note_id}`
        )
        expect(rows).toEqual([{ n: 2 }])
      })
    )
  )

  it.live("concurrent updates from the same revision: exactly one wins, the other is stale", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* daemon()
        const { logged } = yield* loggedNote(client, "Decision: the queue is Postgres.")
        const attempts = [
          "Decision: the queue is Redis.",
          "Decision: the queue is SQS.",
          "Decision: the queue is NATS."
        ]
        const outcomes = yield* Effect.all(
          attempts.map((text) =>
            Effect.either(client.UpdateNote({ note_id: logged.note_id, expected_revision: 1, text }))
          ),
          { concurrency: "unbounded" }
        )
        const won = outcomes.flatMap((o) => (o._tag === "Right" ? [o.right] : []))
        const lost = outcomes.flatMap((o) => (o._tag === "Left" ? [o.left] : []))
        expect(won).toHaveLength(1)
        expect(won[0]?.revision).toBe(2)
        expect(lost).toHaveLength(2)
        for (const e of lost) expect(e).toMatchObject({ _tag: "StaleRevision", current_revision: 2 })

        const history = yield* client.NoteHistory({ note_id: logged.note_id })
        expect(history.revisions.map((r) => r.revision)).toEqual([1, 2])
        expect(attempts).toContain(history.revisions[1]?.text)
        expect(history.revisions[1]?.update_id).toBe(won[0]?.update_id)
      })
    )
  )

  it.live("a retry with the same update_id returns what was stored; other content under it is refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* daemon()
        const { logged } = yield* loggedNote(client, "Note: the staging DB is reset nightly.")
        const request = {
          note_id: logged.note_id,
          expected_revision: 1,
          text: "Note: the staging DB is reset weekly.",
          update_id: uuid()
        }
        const first = yield* client.UpdateNote(request)
        // The retry's expected_revision is stale by now: the stored answer still comes back.
        const retry = yield* client.UpdateNote({ ...request, update_id: request.update_id.toUpperCase() })
        expect(retry).toMatchObject({ ...first, created: false })
        expect((yield* client.NoteHistory({ note_id: logged.note_id })).current_revision).toBe(2)

        const other = yield* Effect.flip(client.UpdateNote({ ...request, text: "Note: never reset." }))
        expect(other).toMatchObject({ _tag: "UpdateConflict", note_id: logged.note_id, differing: ["text"] })
        const elsewhere = yield* loggedNote(client, "Note: another note.")
        const otherNote = yield* Effect.flip(client.UpdateNote({ ...request, note_id: elsewhere.logged.note_id }))
        // Another note (and so, left out, that note's session): the fields that differ are named.
        expect(otherNote._tag).toBe("UpdateConflict")
        if (otherNote._tag === "UpdateConflict") expect(otherNote.differing).toEqual(["note_id", "session_id"])
      })
    )
  )

  it.live("search and recent show only the current revision; each revision's context id shows that revision", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* daemon()
        const { logged } = yield* loggedNote(client, "Decision: the mascot is a narwhal.")
        const second = yield* client.UpdateNote({
          note_id: logged.note_id,
          expected_revision: 1,
          text: "Decision: the mascot is a capybara."
        })
        const third = yield* client.UpdateNote({
          note_id: logged.note_id,
          expected_revision: 2,
          text: "Decision: the mascot is an axolotl."
        })

        // Lexically: the old words find nothing, the current ones find the current revision.
        expect((yield* client.Search({ query: "narwhal" })).results).toEqual([])
        expect((yield* client.Search({ query: "capybara" })).results).toEqual([])
        const found = yield* client.Search({ query: "mascot" })
        expect(found.results.map((r) => r.text)).toEqual(["Decision: the mascot is an axolotl."])
        expect(found.results[0]?.source).toEqual({
          kind: "note_revision",
          note_id: logged.note_id,
          revision: 3,
          revisions: 3
        })

        // Recent: the note once, its current revision.
        const recent = yield* client.Recent({ days: 1 })
        const entries = recent.turns.filter((t) => t.messages.some((m) => m.source.kind === "note_revision"))
        expect(entries).toHaveLength(1)
        expect(entries[0]?.message_count).toBe(1)
        expect(entries[0]?.messages.map((m) => [m.text, m.source])).toEqual([
          [
            "Decision: the mascot is an axolotl.",
            { kind: "note_revision", note_id: logged.note_id, revision: 3, revisions: 3 }
          ]
        ])

        // Context: each revision's id (as note_history lists it) answers that revision's text,
        // saying how many revisions there are; a search hit's id answers the current one.
        const history = yield* client.NoteHistory({ note_id: logged.note_id })
        const texts = [
          "Decision: the mascot is a narwhal.",
          "Decision: the mascot is a capybara.",
          "Decision: the mascot is an axolotl."
        ]
        expect(history.revisions.map((r) => r.context_id)).toEqual([
          logged.context_id,
          second.context_id,
          third.context_id
        ])
        for (const [i, listed] of history.revisions.entries()) {
          const context = yield* client.Context({ context_id: listed.context_id })
          expect(context.total_messages).toBe(1)
          expect(context.anchor.context_id).toBe(listed.context_id)
          expect(context.messages.map((m) => [m.text, m.is_anchor, m.source])).toEqual([
            [texts[i], true, { kind: "note_revision", note_id: logged.note_id, revision: i + 1, revisions: 3 }]
          ])
        }
        const current = yield* client.Context({ context_id: found.results[0]?.context_id ?? "" })
        expect(current.messages.map((m) => [m.text, m.is_anchor])).toEqual([[texts[2], true]])
      })
    )
  )

  it.live("by vector: the new revision's embedding replaces the old one's in the vector index", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const model = fakeModelFactory()
        const { client, paths } = yield* daemon({ factory: model.layer, vectorReads: true })
        const oldText = "Decision: invoices are rendered with wkhtmltopdf."
        const newText = "Decision: invoices are rendered with Typst templates."
        const { logged } = yield* loggedNote(client, oldText)
        yield* noNotePending(client)
        const before = yield* onDisk(paths.database, chunkTexts)
        yield* client.UpdateNote({ note_id: logged.note_id, expected_revision: 1, text: newText })
        const status = yield* noNotePending(client)
        expect(status.query_mode).toBe("hybrid")
        const after = yield* onDisk(paths.database, chunkTexts)
        expect(after.map((c) => c.text)).toEqual([newText])

        // The vector index, read as a query worker reads it: the old chunk's vector is gone, the
        // new chunk's is there, and a query for the old wording finds only the new chunk.
        const { embedder } = makeFakeEmbedder()
        const hits = yield* onDisk(paths.database, (sql) =>
          Effect.gen(function* () {
            const index = yield* makeSqliteVectorIndex(sql)
            const [query] = yield* embedder.embed([oldText], "query")
            return yield* index.search(model.fingerprint, query ?? new Float32Array(embedder.dims), 10)
          })
        )
        expect(hits.map((h) => h.id)).toEqual(after.map((c) => c.id))
        expect(hits.map((h) => h.id)).not.toContain(before[0]?.id)

        const hybrid = yield* client.Search({ query: oldText })
        expect(hybrid.query_mode).toBe("hybrid")
        expect(hybrid.results.map((r) => r.text)).toEqual([newText])
      })
    )
  )
})
