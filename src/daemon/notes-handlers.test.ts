import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option, Schema } from "effect"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { JobFailed } from "../jobs/job-errors.js"
import { registerJobKind } from "../jobs/job-kind.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { fakeModelFactory, type InProcessOptions, inProcessClientWith } from "./daemon-core.test-support.js"

// OpenSession and LogUpdate, answered by the handlers blctxd serves, on the same core layers, in
// process: the writer connection, the job runner with the real repair kind, the index watcher.

type Client = Effect.Effect.Success<ReturnType<typeof inProcessClientWith>>["client"]

const uuid = () => randomUUID()

/** Reads the database as it is on disk, on a connection of its own (what a query worker sees). */
const onDisk = <A>(database: string, read: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: true }))
      return yield* read(sql)
    })
  ).pipe(Effect.provide(SqliteOpenerLive), Effect.orDie)

/** Waits, on what context_status says, until no note waits for a vector (a generous bound). */
/** Waits until no note is pending and, when asked, until a job of `kind` has completed too. */
const noNotePending = (client: Client, completed?: string) =>
  Effect.gen(function* () {
    while (true) {
      const status = yield* client.ContextStatus()
      const done =
        completed === undefined || status.recent_jobs.some((j) => j.kind === completed && j.state === "completed")
      if (status.authored_updates_pending === 0 && done) return status
      yield* Effect.sleep(Duration.millis(50))
    }
  }).pipe(
    Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error("notes still pending") }),
    Effect.orDie
  )

const daemon = (options: InProcessOptions = {}) => inProcessClientWith(options)

const opened = (client: Client, project = "/home/dev/shop-api") => client.OpenSession({ binding_key: uuid(), project })

describe("authored updates, in process", () => {
  it.live("OpenSession: the same binding is the same session; other metadata is refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* daemon()
        const binding = uuid()
        const first = yield* client.OpenSession({ binding_key: binding, project: "/home/dev/shop-api/" })
        expect(first.created).toBe(true)
        expect(first.session_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        expect(first.session_id).not.toBe(binding)
        expect(first).toMatchObject({ binding_key: binding, project: "/home/dev/shop-api", parent_session_id: null })

        // A retry (the same metadata, the binding in capitals), a resume without metadata.
        const again = yield* client.OpenSession({ binding_key: binding.toUpperCase(), project: "/home/dev/shop-api" })
        expect(again).toMatchObject({ session_id: first.session_id, created: false, created_at: first.created_at })
        const resumed = yield* client.OpenSession({ binding_key: binding })
        expect(resumed).toMatchObject({ session_id: first.session_id, created: false, project: "/home/dev/shop-api" })

        // Other metadata is a conflict that says what differs.
        const conflict = yield* Effect.flip(client.OpenSession({ binding_key: binding, project: "/home/dev/other" }))
        expect(conflict._tag).toBe("SessionBindingConflict")
        expect(conflict.message).toContain(first.session_id)
        expect(conflict.message).toContain('project "/home/dev/shop-api" (this call: "/home/dev/other")')
        if (conflict._tag === "SessionBindingConflict") expect(conflict.remediation).toContain("binding_key")

        // A sub-agent's session names its parent, which must be a blctx session.
        const child = yield* client.OpenSession({ binding_key: uuid(), parent_session_id: first.session_id })
        expect(child).toMatchObject({ created: true, parent_session_id: first.session_id, project: null })
        const orphan = yield* Effect.flip(client.OpenSession({ binding_key: uuid(), parent_session_id: binding }))
        expect(orphan).toMatchObject({ _tag: "UnknownContextSession", field: "parent_session_id", session_id: binding })
        const lateParent = yield* Effect.flip(
          client.OpenSession({ binding_key: binding, parent_session_id: child.session_id })
        )
        expect(lateParent._tag).toBe("SessionBindingConflict")
      })
    )
  )

  it.live("LogUpdate: committed at once, found by context and word search as an authored update", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* daemon()
        const session = yield* opened(client)
        const logged = yield* client.LogUpdate({
          session_id: session.session_id,
          update_id: uuid(),
          text: "Decided: the shop API deploys blue-green behind the zebrafish canary gate.",
          tags: ["deploy", "shop-api"],
          kind: "decision",
          source_text: "We'll deploy blue-green behind the zebrafish canary gate."
        })
        expect(logged).toMatchObject({
          created: true,
          revision: 1,
          source_type: "authored_update",
          session_id: session.session_id,
          kind: "decision",
          authorship: "agent_generated",
          tags: ["deploy", "shop-api"],
          redactions: 0
        })
        expect(logged.context_id).toMatch(/^m\d+$/)

        // Lexically at once (FTS follows the chunks), with the note's provenance and session.
        const found = yield* client.Search({ query: "zebrafish canary" })
        expect(found.query_mode).toBe("lexical")
        const hit = found.results[0]
        expect(hit).toMatchObject({
          text: "Decided: the shop API deploys blue-green behind the zebrafish canary gate.",
          source_type: "authored_update",
          session_id: session.session_id,
          project: "/home/dev/shop-api",
          kind: "decision",
          role: "assistant",
          source: { kind: "note_revision", note_id: logged.note_id, revision: 1 }
        })
        // The filters an agent narrows by: its session, its project, the source type.
        for (const filters of [
          { session: session.session_id },
          { project: "/home/dev/shop-api" },
          { source_type: "authored_update" }
        ]) {
          expect((yield* client.Search({ query: "zebrafish", filters })).results.length, JSON.stringify(filters)).toBe(
            1
          )
        }
        expect((yield* client.Search({ query: "zebrafish", filters: { project: "/home/dev/other" } })).results).toEqual(
          []
        )

        // Recent at once: the note is an entry of its blctx session, with its project.
        const recent = yield* client.Recent({ project: "/home/dev/shop-api" })
        expect(recent.turns).toHaveLength(1)
        expect(recent.turns[0]).toMatchObject({ session_id: session.session_id, project: "/home/dev/shop-api" })
        expect(recent.turns[0]?.messages[0]).toMatchObject({
          context_id: logged.context_id,
          text: "Decided: the shop API deploys blue-green behind the zebrafish canary gate.",
          source: { kind: "note_revision", note_id: logged.note_id, revision: 1 }
        })

        // Context from the hit and from the returned id: the note, exactly.
        for (const id of [hit?.context_id ?? "", logged.context_id]) {
          const context = yield* client.Context({ context_id: id })
          expect(context.session_id).toBe(session.session_id)
          expect(context.messages).toHaveLength(1)
          expect(context.messages[0]).toMatchObject({
            context_id: logged.context_id,
            is_anchor: true,
            source_type: "authored_update",
            text: "Decided: the shop API deploys blue-green behind the zebrafish canary gate.",
            timestamp: logged.created_at
          })
        }

        // Without a model the note waits for its vector, and says so.
        const status = yield* client.ContextStatus()
        expect(status.authored_updates_pending).toBe(1)
        expect(status.coverage.messages).toBe(1)
      })
    )
  )

  it.live("LogUpdate: the same update twice writes once; other content under that id is refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* daemon()
        const session = yield* opened(client)
        const request = {
          session_id: session.session_id,
          update_id: uuid(),
          text: "Status: the checkout flake is a timezone bug in the fixtures.",
          tags: ["checkout"]
        }
        const first = yield* client.LogUpdate(request)
        // A retry: defaults spelt out, ids in capitals, the same content.
        const retry = yield* client.LogUpdate({
          ...request,
          session_id: request.session_id.toUpperCase(),
          update_id: request.update_id.toUpperCase(),
          kind: "note",
          authorship: "agent_generated"
        })
        expect(retry).toMatchObject({ ...first, created: false })
        const stored = yield* onDisk(
          paths.database,
          (sql) =>
            sql<{ messages: number; updates: number; chunks: number }>`
            SELECT (SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM authored_updates) AS updates,
                   (SELECT count(*) FROM chunks) AS chunks`
        )
        expect(stored).toEqual([{ messages: 1, updates: 1, chunks: 1 }])

        const otherText = yield* Effect.flip(client.LogUpdate({ ...request, text: "Status: something else." }))
        expect(otherText).toMatchObject({ _tag: "UpdateConflict", note_id: first.note_id, differing: ["text"] })
        expect(otherText.message).toContain(request.update_id)
        const otherTags = yield* Effect.flip(
          client.LogUpdate({ ...request, tags: ["checkout", "flaky"], kind: "status" })
        )
        expect(otherTags).toMatchObject({ _tag: "UpdateConflict", differing: ["kind", "tags"] })

        const nowhere = yield* Effect.flip(client.LogUpdate({ ...request, update_id: uuid(), session_id: uuid() }))
        expect(nowhere).toMatchObject({ _tag: "UnknownContextSession", field: "session_id" })
        if (nowhere._tag === "UnknownContextSession") expect(nowhere.remediation).toContain("open_session")
      })
    )
  )

  it.live("LogUpdate: secrets in the text, tags, source_text and project are redacted before anything is stored", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* daemon()
        const key = "sk-proj-FakeOpenAiKey0123456789abcdefGHIJ"
        const session = yield* client.OpenSession({
          binding_key: uuid(),
          project: "/home/dev/ghp_FakeGitHubToken0123456789abcdefGHIJKL/app"
        })
        expect(session.project).not.toContain("ghp_FakeGitHubToken")
        const logged = yield* client.LogUpdate({
          session_id: session.session_id,
          update_id: uuid(),
          text: `Rotated the key: OPENAI_API_KEY is ${key} for this repo.`,
          tags: [`key ${key}`],
          source_text: `Use ${key} from now on.`
        })
        expect(logged.redactions).toBe(3)
        expect(logged.tags[0]).toContain("[REDACTED:")
        const context = yield* client.Context({ context_id: logged.context_id })
        expect(context.messages[0]?.text).toContain("[REDACTED:openai_key]")
        expect((yield* client.Search({ query: "FakeOpenAiKey0123456789abcdefGHIJ" })).results).toEqual([])

        // No copy anywhere: every text column of every table on disk.
        const dump = yield* onDisk(paths.database, (sql) =>
          Effect.gen(function* () {
            const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`
            const all: Array<unknown> = []
            for (const t of tables) all.push(...(yield* sql.unsafe(`SELECT * FROM "${t.name}"`)))
            return JSON.stringify(all)
          })
        )
        expect(dump).toContain("[REDACTED:openai_key]")
        expect(dump).not.toContain("FakeOpenAiKey")
        expect(dump).not.toContain("FakeGitHubToken")
      })
    )
  )

  it.live("authored_updates_pending counts a note until its vector exists; a failed embedding is retried", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // The first embedding fails (the background one): the note stays pending until the
        // daemon's index watcher queues a repair, which embeds it.
        const model = fakeModelFactory({ failEmbeds: 1 })
        const { client, paths } = yield* daemon({ factory: model.layer })
        const session = yield* opened(client)
        const logged = yield* client.LogUpdate({
          session_id: session.session_id,
          update_id: uuid(),
          text: "Status: vectors for notes are written after the commit."
        })
        expect(logged.created).toBe(true)
        // The repair's vectors commit before the job is marked completed: wait for both.
        const status = yield* noNotePending(client, "repair")
        expect(model.embedCalls.failed).toBe(1)
        expect(status.recent_jobs.some((j) => j.kind === "repair" && j.state === "completed")).toBe(true)
        const chunks = yield* onDisk(
          paths.database,
          (sql) => sql<{ vector_fingerprint: string | null }>`SELECT vector_fingerprint FROM chunks`
        )
        expect(chunks).toEqual([{ vector_fingerprint: model.fingerprint.key }])

        // With the model working, the next note is embedded right after its commit (in the
        // background; `note-embedding.test.ts` checks that step alone), and search can use vectors.
        yield* client.LogUpdate({
          session_id: session.session_id,
          update_id: uuid(),
          text: "Decision: notes embed in the background."
        })
        const after = yield* noNotePending(client)
        expect(after.query_mode).toBe("hybrid")
        expect(model.embedCalls.passages).toBeGreaterThanOrEqual(3)
      })
    )
  )

  it.live("a note waits for a job's open write transaction, then commits on its own", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const entered = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        // A job whose step writes, then holds its transaction open, then fails: it rolls back.
        const hold = registerJobKind({
          name: "hold",
          params: Schema.Struct({}),
          checkpoint: Schema.Null,
          run: (_params, job) =>
            job
              .commit(
                Effect.gen(function* () {
                  const sql = yield* SqlClient.SqlClient
                  yield* sql`INSERT INTO meta (key, value) VALUES ('held', 'inside the job')`
                  yield* Deferred.succeed(entered, undefined)
                  yield* Deferred.await(finish)
                  return yield* new JobFailed({ message: "rolled back on purpose" })
                }),
                { checkpoint: null, progressDone: 0 }
              )
              .pipe(Effect.as({ state: "completed" as const }))
        })
        const { client, paths } = yield* daemon({ kinds: [hold] })
        const session = yield* opened(client)
        yield* client.SubmitJob({ kind: "hold" })
        yield* Deferred.await(entered)

        const note = yield* Effect.fork(
          client.LogUpdate({
            session_id: session.session_id,
            update_id: uuid(),
            text: "Status: written after the job."
          })
        )
        yield* Effect.sleep(Duration.millis(300))
        // Still waiting: it cannot start its transaction inside the job's.
        expect(Option.isNone(yield* Fiber.poll(note))).toBe(true)
        yield* Deferred.succeed(finish, undefined)
        const logged = yield* Fiber.join(note)
        expect(logged.created).toBe(true)

        // The job's write rolled back; the note, written after, stands.
        const rows = yield* onDisk(paths.database, (sql) =>
          Effect.all({
            held: sql`SELECT value FROM meta WHERE key = 'held'`,
            notes: sql<{ text: string }>`SELECT text FROM messages WHERE source_type = 'authored_update'`
          })
        )
        expect(rows).toEqual({ held: [], notes: [{ text: "Status: written after the job." }] })
      })
    )
  )
})
