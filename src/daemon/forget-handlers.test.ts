import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import type { SqlClient } from "@effect/sql"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqliteOpenerLive } from "../../layers/sqlite-opener-live.js"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import type { ForgetCounts, ForgetSelector } from "../forget/forget-contract.js"
import { appendCodexTurn, filesHolding, writeCodexSession } from "../forget/forget-fixtures.test-support.js"
import { makeTempDir } from "../importer/history-db.test-support.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import {
  fakeModelFactory,
  jobFinished as finished,
  type InProcessOptions,
  inProcessClientWith
} from "./daemon-core.test-support.js"

// Forgetting through the daemon's procedures, in process over a real database file: previews
// count what confirmations remove, tokens guard them, and nothing of the text stays findable or
// in the data directory's bytes.

const MARK = "Qvzmarker4417alpha"
const NOTE_MARK = "Qvznotemark9921"
const SESSION_A = "0199c000-0000-7000-8000-00000000000a"
const SESSION_B = "0199c000-0000-7000-8000-00000000000b"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-forget-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

type Client = Effect.Effect.Success<ReturnType<typeof inProcessClientWith>>["client"]

const importPaths = (client: Client, paths: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const submitted = yield* client.SubmitJob({ kind: "import", params: { paths } })
    return yield* finished(client, submitted.job.id)
  })

const onDisk = <A>(database: string, read: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: database, readonly: true }))
      return yield* read(sql)
    })
  ).pipe(Effect.provide(SqliteOpenerLive), Effect.orDie)

/** What the database holds, by source type, in the shape of a preview's counts. */
const holdings = (database: string) =>
  onDisk(database, (sql) =>
    Effect.gen(function* () {
      const rows = yield* sql<{
        source_type: string
        messages: number
        chunks: number
        vectors: number
        notes: number
        note_revisions: number
      }>`SELECT m.source_type, count(DISTINCT m.id) AS messages, count(c.id) AS chunks,
                count(c.vector_fingerprint) AS vectors, count(DISTINCT m.note_id) AS notes,
                count(DISTINCT CASE WHEN m.note_id IS NOT NULL THEN m.id END) AS note_revisions
         FROM messages m LEFT JOIN chunks c ON c.message_id = m.id GROUP BY m.source_type`
      const sessions = yield* sql<{ n: number }>`SELECT count(*) AS n FROM sessions`
      const contextSessions = yield* sql<{ n: number }>`SELECT count(*) AS n FROM context_sessions`
      return {
        bySource: Object.fromEntries(rows.map((r) => [r.source_type, r])),
        sessions: sessions[0]?.n ?? 0,
        contextSessions: contextSessions[0]?.n ?? 0
      }
    })
  )

type Holdings = Effect.Effect.Success<ReturnType<typeof holdings>>

/** The preview's counts must be exactly the difference between before and after. */
const expectRemoved = (counts: ForgetCounts, before: Holdings, after: Holdings) => {
  let transcriptSessions = 0
  for (const type of new Set([...Object.keys(before.bySource), ...Object.keys(counts.by_source)])) {
    const b = before.bySource[type]
    const a = after.bySource[type]
    const c = counts.by_source[type]
    for (const field of ["messages", "chunks", "vectors", "notes", "note_revisions"] as const) {
      expect(`${type}.${field}=${(b?.[field] ?? 0) - (a?.[field] ?? 0)}`).toBe(`${type}.${field}=${c?.[field] ?? 0}`)
    }
    if (type !== "authored_update") transcriptSessions += c?.sessions ?? 0
  }
  expect(before.sessions - after.sessions).toBe(transcriptSessions)
  expect(before.contextSessions - after.contextSessions).toBe(counts.by_source.authored_update?.sessions ?? 0)
  expect(counts.messages).toBe(Object.values(counts.by_source).reduce((n, c) => n + c.messages, 0))
}

/** Two Codex sessions (A carries the marker) and one note carrying its own marker, all imported. */
const scenarioWith = (options: InProcessOptions) =>
  Effect.gen(function* () {
    const { client, paths } = yield* inProcessClientWith(options)
    const codexHome = NodePath.join(dir, "codex")
    const fileA = writeCodexSession(codexHome, SESSION_A, "/home/dev/alpha", [
      {
        prompt: `Remember the code word ${MARK} for the deploy.`,
        answer: `Noted: ${MARK}.`,
        at: "2026-03-01T10:00:00.000Z"
      },
      {
        prompt: "What else about the alpha deploy?",
        answer: "Blue-green, after health checks.",
        at: "2026-03-02T10:00:00.000Z"
      }
    ])
    const fileB = writeCodexSession(codexHome, SESSION_B, "/home/dev/beta", [
      {
        prompt: "How do beta releases work?",
        answer: "Beta releases are tagged weekly.",
        at: "2026-03-05T10:00:00.000Z"
      }
    ])
    const job = yield* importPaths(client, [fileA, fileB])
    expect(job.state).toBe("completed")
    const session = yield* client.OpenSession({ binding_key: randomUUID(), project: "/home/dev/alpha" })
    const note = yield* client.LogUpdate({
      session_id: session.session_id,
      update_id: randomUUID(),
      text: `Decision: keep ${NOTE_MARK} in the alpha runbook.`
    })
    return { client, paths, fileA, fileB, session, note, codexHome }
  })
const scenario = scenarioWith({})

const previewAndForget = (client: Client, selector: ForgetSelector) =>
  Effect.gen(function* () {
    const preview = yield* client.ForgetPreview({ selector })
    const forgotten = yield* client.Forget({ selector, token: preview.token })
    return { preview, forgotten }
  })

describe("forget, through the daemon", () => {
  it.live(
    "by agent session: the preview counts what the confirmation removes, and no byte of the marker is left",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { client, paths } = yield* scenario
          const before = yield* holdings(paths.database)
          const selector = { session: SESSION_A }
          const preview = yield* client.ForgetPreview({ selector })
          expect(preview.counts.by_source.codex_transcript?.messages).toBe(4)
          expect(preview.counts.by_source.codex_transcript?.sessions).toBe(1)
          expect(preview.counts.by_source.codex_transcript?.files).toBe(1)
          expect(preview.items.length).toBe(4)
          expect(preview.items[0]?.excerpt).toContain(MARK)
          expect(preview.items[0]?.source.kind).toBe("transcript_span")
          // A preview removes nothing.
          expect(yield* holdings(paths.database)).toEqual(before)
          expect((yield* client.Search({ query: MARK })).results.length).toBeGreaterThan(0)

          const forgotten = yield* client.Forget({ selector, token: preview.token })
          expect(forgotten.counts).toEqual(preview.counts)
          expect(forgotten.scrubbed).toBe(true)
          expectRemoved(preview.counts, before, yield* holdings(paths.database))

          expect((yield* client.Search({ query: MARK })).results).toEqual([])
          const recent = yield* client.Recent({})
          expect(JSON.stringify(recent)).not.toContain(MARK)
          expect(JSON.stringify(recent)).toContain("Beta releases")
          const gone = yield* Effect.flip(client.Context({ context_id: preview.items[0]?.context_id ?? "" }))
          expect(gone._tag).toBeDefined()
          expect(filesHolding(paths.dataDir, MARK)).toEqual([])
          // The note and the other session are still there.
          expect((yield* client.Search({ query: NOTE_MARK })).results.length).toBe(1)
          expect((yield* client.Search({ query: "beta releases" })).results.length).toBeGreaterThan(0)
          const tombstones = yield* onDisk(
            paths.database,
            (sql) =>
              sql<{ selector: string; counts: string; scrubbed_at: string | null }>`SELECT * FROM forget_tombstones`
          )
          expect(tombstones.length).toBe(1)
          expect(JSON.parse(tombstones[0]?.selector ?? "{}")).toEqual(selector)
          expect(tombstones[0]?.scrubbed_at).not.toBeNull()
        })
      ),
    60_000
  )

  it.live(
    "every selector kind: what the preview counts is exactly what the confirmation removes",
    () =>
      Effect.gen(function* () {
        const selectors: ReadonlyArray<(s: Effect.Effect.Success<typeof scenario>) => ForgetSelector> = [
          (s) => ({ note: s.note.note_id }),
          (s) => ({ context_session: s.session.session_id }),
          (s) => ({ file: s.fileA }),
          () => ({ session: SESSION_A }),
          () => ({ project: "/home/dev/alpha/" }),
          () => ({ since: "2026-03-01", until: "2026-03-02" }),
          () => ({ until: "2026-03-03" })
        ]
        for (const select of selectors) {
          yield* Effect.scoped(
            Effect.gen(function* () {
              const s = yield* scenario
              const before = yield* holdings(s.paths.database)
              const selector = select(s)
              const { preview, forgotten } = yield* previewAndForget(s.client, selector)
              expect(forgotten.counts).toEqual(preview.counts)
              expect(preview.counts.messages).toBeGreaterThan(0)
              expectRemoved(preview.counts, before, yield* holdings(s.paths.database))
              // What the selector matched is no longer matched.
              const again = yield* s.client.ForgetPreview({ selector })
              expect(again.counts.messages).toBe(0)
            })
          )
          Fs.rmSync(dir, { recursive: true, force: true })
          Fs.mkdirSync(dir, { recursive: true })
        }
      }),
    120_000
  )

  it.live("a project takes its transcripts and the notes of sessions in it, whole; other projects stay", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths } = yield* scenario
        const { preview } = yield* previewAndForget(client, { project: "/home/dev/alpha" })
        expect(preview.counts.by_source.codex_transcript?.messages).toBe(4)
        expect(preview.counts.by_source.authored_update?.notes).toBe(1)
        expect(preview.notes.join(" ")).toContain("whole")
        expect((yield* client.Search({ query: NOTE_MARK })).results).toEqual([])
        expect((yield* client.Search({ query: "beta releases" })).results.length).toBeGreaterThan(0)
        expect(filesHolding(paths.dataDir, NOTE_MARK)).toEqual([])
        expect(filesHolding(paths.dataDir, MARK)).toEqual([])
      })
    )
  )

  it.live("a wrong token, another selector's token, or a stale one removes nothing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths, codexHome } = yield* scenario
        const before = yield* holdings(paths.database)
        const selector = { project: "/home/dev/alpha" }
        const preview = yield* client.ForgetPreview({ selector })

        const wrong = yield* Effect.flip(client.Forget({ selector, token: "12345.abc" }))
        expect(wrong._tag).toBe("ForgetTokenMismatch")
        const forged = yield* Effect.flip(
          client.Forget({ selector, token: `${preview.token.split(".")[0]}.${"0".repeat(64)}` })
        )
        expect(forged._tag).toBe("ForgetTokenMismatch")
        const other = yield* client.ForgetPreview({ selector: { session: SESSION_B } })
        const crossed = yield* Effect.flip(client.Forget({ selector, token: other.token }))
        expect(crossed._tag).toBe("ForgetTokenMismatch")
        if (crossed._tag === "ForgetTokenMismatch") expect(crossed.remediation).toContain("Preview again")
        expect(yield* holdings(paths.database)).toEqual(before)

        // The selection grows after the preview: the token no longer confirms it.
        const fileC = writeCodexSession(codexHome, "0199c000-0000-7000-8000-00000000000c", "/home/dev/alpha/sub", [
          { prompt: "A later alpha question", answer: "A later alpha answer.", at: "2026-03-06T10:00:00.000Z" }
        ])
        yield* importPaths(client, [fileC])
        const grown = yield* holdings(paths.database)
        const stale = yield* Effect.flip(client.Forget({ selector, token: preview.token }))
        expect(stale._tag).toBe("ForgetTokenMismatch")
        expect(yield* holdings(paths.database)).toEqual(grown)
        const tombstones = yield* onDisk(paths.database, (sql) => sql`SELECT id FROM forget_tombstones`)
        expect(tombstones).toEqual([])
        // A fresh preview confirms.
        const fresh = yield* client.ForgetPreview({ selector })
        expect(fresh.counts.by_source.codex_transcript?.messages).toBe(6)
        yield* client.Forget({ selector, token: fresh.token })
      })
    )
  )

  it.live("a selector naming two kinds, or none, or an unreadable date, is refused", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client } = yield* scenario
        const unreadable = yield* Effect.flip(client.ForgetPreview({ selector: { since: "yesterday" } }))
        expect(unreadable._tag).toBe("InvalidForgetSelector")
        const backwards = yield* Effect.flip(
          client.ForgetPreview({ selector: { since: "2026-03-02", until: "2026-03-01" } })
        )
        expect(backwards._tag).toBe("InvalidForgetSelector")
      })
    )
  )

  it.live("re-importing a forgotten transcript brings nothing back; a turn appended later is indexed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { client, paths, fileA } = yield* scenario
        yield* previewAndForget(client, { file: fileA })
        // Unchanged: skipped.
        const unchanged = yield* importPaths(client, [fileA])
        expect(unchanged.counts.files_unchanged).toBe(1)
        // Touched (same bytes, new mtime): an append of nothing, whose last turn is re-read and not stored.
        Fs.utimesSync(fileA, new Date(), new Date(Date.now() + 5_000))
        const touched = yield* importPaths(client, [fileA])
        expect(touched.counts.messages_added ?? 0).toBe(0)
        expect(touched.counts.messages_forgotten).toBe(2)
        // Rewritten (a byte changed, same length): reparsed whole, and nothing inside the span is stored.
        const text = Fs.readFileSync(fileA, "utf8")
        const last = text.lastIndexOf("2026-03-02T10:00:03.000Z")
        Fs.writeFileSync(fileA, `${text.slice(0, last)}2026-03-02T10:00:04.000Z${text.slice(last + 24)}`)
        const rewritten = yield* importPaths(client, [fileA])
        expect(rewritten.counts.files_imported).toBe(1)
        expect(rewritten.counts.messages_added ?? 0).toBe(0)
        expect(rewritten.counts.messages_forgotten).toBe(4)
        expect((yield* client.Search({ query: MARK })).results).toEqual([])
        expect(filesHolding(paths.dataDir, MARK)).toEqual([])

        appendCodexTurn(fileA, `${SESSION_A}-t3`, {
          prompt: "A new question zephyrine after forgetting",
          answer: "A new answer zephyrine.",
          at: "2026-03-07T10:00:00.000Z"
        })
        const appended = yield* importPaths(client, [fileA])
        expect(appended.counts.messages_added).toBe(2)
        const found = yield* client.Search({ query: "zephyrine" })
        expect(found.results.length).toBe(2)
        expect((yield* client.Search({ query: MARK })).results).toEqual([])
        const texts = yield* onDisk(
          paths.database,
          (sql) => sql<{ text: string }>`SELECT text FROM messages WHERE source_type = 'codex_transcript' ORDER BY id`
        )
        expect(texts.map((t) => t.text).filter((t) => t.includes("alpha") || t.includes(MARK))).toEqual([])
      })
    )
  )

  it.live("with a model, the forgotten chunks' vectors leave the vector table in the same transaction", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const model = fakeModelFactory()
        const { client, paths } = yield* scenarioWith({ factory: model.layer, vectorReads: true })
        // The note's vector is written after its commit: wait until none is pending.
        yield* Effect.gen(function* () {
          while ((yield* client.ContextStatus()).authored_updates_pending > 0) yield* Effect.sleep(Duration.millis(20))
        }).pipe(Effect.timeout(Duration.seconds(30)))
        const vectors = () =>
          onDisk(paths.database, (sql) =>
            Effect.flatMap(makeSqliteVectorIndex(sql as never), (index) => index.count(model.fingerprint))
          )
        const before = yield* vectors()
        const { preview } = yield* previewAndForget(client, { project: "/home/dev/alpha" })
        const counted = Object.values(preview.counts.by_source).reduce((n, c) => n + c.vectors, 0)
        expect(counted).toBe(5)
        expect(yield* vectors()).toBe(before - counted)
        const pending = yield* onDisk(
          paths.database,
          (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM removed_chunks`
        )
        expect(pending[0]?.n).toBe(0)
        // Hybrid search always has nearest neighbours: none of them may be forgotten text.
        expect(JSON.stringify((yield* client.Search({ query: MARK })).results)).not.toContain(MARK)
        expect(filesHolding(paths.dataDir, MARK)).toEqual([])
      })
    )
  )

  it.live(
    "a large index keeps nothing of forgotten terms, forget after forget: FTS pages, its b-tree keys and free pages",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { client, paths } = yield* inProcessClientWith({})
          const codexHome = NodePath.join(dir, "codex")
          const files = [0, 1, 2].map((t) =>
            writeCodexSession(
              codexHome,
              `0199c000-0000-7000-8000-00000000010${t}`,
              `/home/dev/many-${t}`,
              Array.from({ length: 300 }, (_, i) => ({
                prompt: `Trial ${t} question ${i} about ${MARK}t${t} and more words ${MARK}n${t}x${i}.`,
                answer: `Trial ${t} answer ${i}: ${MARK}t${t} noted.`,
                at: new Date(Date.parse("2026-03-01T00:00:00Z") + i * 60_000).toISOString()
              }))
            )
          )
          yield* importPaths(client, files)
          yield* previewAndForget(client, { file: files[1] ?? "" })
          expect(filesHolding(paths.dataDir, `${MARK}t1`)).toEqual([])
          // Every term of the file, as a prefix: FTS5 keeps term prefixes as keys of its segment b-tree.
          expect(filesHolding(paths.dataDir, `${MARK}n1`)).toEqual([])
          expect((yield* client.Search({ query: `${MARK}t0` })).results.length).toBeGreaterThan(0)
          expect((yield* client.Search({ query: `${MARK}t2` })).results.length).toBeGreaterThan(0)
          // A second forget, on an index the first scrub left as one segment.
          yield* previewAndForget(client, { file: files[2] ?? "" })
          expect(filesHolding(paths.dataDir, `${MARK}t2`)).toEqual([])
          expect(filesHolding(paths.dataDir, `${MARK}n2`)).toEqual([])
          expect((yield* client.Search({ query: `${MARK}t0` })).results.length).toBeGreaterThan(0)
        })
      ),
    60_000
  )
})
