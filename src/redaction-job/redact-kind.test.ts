import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { fixturesDir, importOnce, makeTempDir, withHistoryDb } from "../importer/history-db.test-support.js"
import { JobId } from "../jobs/job.js"
import type { RegisteredJobKind } from "../jobs/job-kind.js"
import { contentHash, sha256 } from "../notes/note-content.js"
import { insertRevision } from "../notes/note-rows.js"
import { REDACTION_RULES_VERSION } from "../redaction/redact.js"
import { RULES_VERSION_KEY, storedRulesVersion } from "../redaction/rules-version.js"
import { insertPendingChunks } from "../store/chunk-rows.js"
import { IndexingServices, wholeMessageChunking } from "../vectors/import-services.js"
import type { ChunkId } from "../vectors/vector-index.js"
import { makeRedactKind } from "./redact-kind.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-redact-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** Secrets the rules before version 2 kept: they are stored below as those rules left them. */
const TOKEN = "MTEyMjMzNDQ1NTY2Nzc4ODk5.GFake0.FakeRedactAgainHmac0123456789abcdefGHI"
const HOOK = `https://discord.com/api/webhooks/112233445566778899/${"FakeHookAgain0123456789".repeat(3)}`
const KEY = Buffer.from(
  "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCFakeRedactAgainKey0123456789\n-----END PRIVATE KEY-----\n"
).toString("base64")
/** What a search index or a file byte scan would find of them. */
const NEEDLES = [TOKEN, "FakeRedactAgainHmac0123456789abcdefGHI", "FakeHookAgain0123456789", KEY]

const jobId = JobId.make("00000000-0000-4000-8000-0000000000aa")

/** Runs the kind as the job runner does; `crashAfter` commits, then dies as a kill would. */
const runKind = (kind: RegisteredJobKind, checkpoint: Option.Option<string>, crashAfter = Number.POSITIVE_INFINITY) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let saved = checkpoint
    let commits = 0
    const exit = yield* Effect.exit(
      kind.run("{}", checkpoint, {
        jobId,
        commit: (work, next) =>
          Effect.suspend(() => {
            if (commits >= crashAfter) return Effect.die("killed")
            commits++
            return sql.withTransaction(work).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.tap(() => {
                saved = Option.some(next.checkpoint)
              }),
              Effect.catchIf(
                (e): e is SqlError => e instanceof SqlError,
                (e) => Effect.die(e)
              )
            )
          })
      })
    )
    return { exit, saved }
  })

/** The fake model with its vectors in this file, and whole-message chunks. */
const services = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient) as SqliteClient.SqliteClient
  const vectors = yield* makeSqliteVectorIndex(sql)
  const embedder = makeFakeEmbedder().embedder
  const embedding = {
    fingerprint: embedder.fingerprint,
    embed: (texts: ReadonlyArray<string>) => embedder.embed(texts, "passage"),
    embedQuery: (text: string) => Effect.map(embedder.embed([text], "query"), (v) => v[0] ?? new Float32Array(0)),
    vectors
  }
  const layer = Layer.succeed(IndexingServices, {
    current: Effect.succeed({ chunking: wholeMessageChunking, embedding: Option.some(embedding) }),
    unavailable: Effect.succeed(Option.none())
  })
  return { layer, embedding }
})

/**
 * A database as the rules of version 1 left it: a transcript message, its session's cwd, a blctx
 * session's project and a note (text, tags, source_text) holding secrets those rules kept; every
 * chunk with a vector. Returns the ids of the chunks that hold a secret.
 */
const buildWithOlderRules = (embedding: Effect.Effect.Success<typeof services>["embedding"]) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const path = NodePath.join(dir, "s.jsonl")
    Fs.copyFileSync(NodePath.join(fixturesDir, "new-format-turn-ids.jsonl"), path)
    yield* importOnce(path)
    const [first] = yield* sql<{ id: number; text: string }>`SELECT id, text FROM messages ORDER BY id LIMIT 1`
    const text = `${first?.text ?? ""} and the bot token is ${TOKEN}`
    yield* sql`UPDATE messages SET text = ${text}, text_sha256 = ${sha256(text)} WHERE id = ${first?.id ?? 0}`
    yield* sql`UPDATE chunks SET text = ${text}, char_end = ${text.length} WHERE message_id = ${first?.id ?? 0}`
    yield* sql`UPDATE sessions SET cwd = ${`/home/dev/bots/${TOKEN}`}`
    yield* sql`INSERT INTO context_sessions ${sql.insert({
      id: "c0ffee00-0000-4000-8000-000000000001",
      binding_key: "c0ffee00-0000-4000-8000-000000000002",
      project: `/srv/${TOKEN}`,
      parent_session_id: null,
      created_at: "2026-03-01T09:00:00.000Z"
    })}`
    const note = {
      session_id: "c0ffee00-0000-4000-8000-000000000001",
      kind: "decision" as const,
      authorship: "agent_generated" as const,
      tags: ["discord", TOKEN],
      text: `The k8s secret holds ${KEY} now.`,
      source_text: `posted to ${HOOK}`
    }
    const messageId = yield* insertRevision(sql, {
      ...note,
      note_id: "c0ffee00-0000-4000-8000-000000000003",
      revision: 1,
      update_id: "c0ffee00-0000-4000-8000-000000000004",
      text_sha256: sha256(note.text),
      text_redactions: 0,
      source_text_sha256: sha256(note.source_text),
      content_sha256: contentHash(note),
      created_at: "2026-03-01T09:00:00.000Z",
      project: `/srv/${TOKEN}`
    })
    yield* insertPendingChunks(sql, messageId, {
      tokenizer: wholeMessageChunking.tokenizer,
      pieces: [{ start: 0, end: note.text.length, text: note.text }]
    })
    const chunks = yield* sql<{ id: number; text: string }>`SELECT id, text FROM chunks`
    const vectors = yield* embedding.embed(chunks.map((c) => c.text))
    yield* embedding.vectors.upsert(
      embedding.fingerprint,
      chunks.map((c, i) => ({ id: c.id as ChunkId, vector: vectors[i] ?? new Float32Array(0) }))
    )
    yield* sql`UPDATE chunks SET vector_fingerprint = ${embedding.fingerprint.key}`
    yield* sql`INSERT INTO meta (key, value) VALUES (${RULES_VERSION_KEY}, '1')
               ON CONFLICT (key) DO UPDATE SET value = excluded.value`
    return chunks.filter((c) => NEEDLES.some((n) => c.text.includes(n))).map((c) => c.id)
  })

/** Every needle found in the rows, the FTS index and the bytes of the database files. */
const survivors = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const found: Array<string> = []
  for (const table of ["messages", "chunks", "sessions", "context_sessions", "authored_updates"]) {
    const rows = JSON.stringify(yield* sql.unsafe(`SELECT * FROM ${table}`))
    for (const n of NEEDLES) if (rows.includes(n)) found.push(`${table}: ${n.slice(0, 24)}`)
  }
  for (const term of ["FakeRedactAgainHmac0123456789abcdefGHI", "MTEyMjMzNDQ1NTY2Nzc4ODk5"]) {
    const [hit] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ${`"${term}"`}`
    if ((hit?.n ?? 0) > 0) found.push(`chunks_fts: ${term}`)
  }
  for (const file of Fs.readdirSync(dir).filter((f) => f.startsWith("context.db"))) {
    const bytes = Fs.readFileSync(NodePath.join(dir, file))
    for (const n of NEEDLES) if (bytes.includes(Buffer.from(n))) found.push(`${file}: ${n.slice(0, 24)}`)
  }
  return found
})

describe("redact job", () => {
  it.effect(
    "redacts again what older rules stored: rows, chunks, FTS, vectors and every byte of the files; then stores the version",
    () =>
      withHistoryDb(
        dir,
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const { layer, embedding } = yield* services
          const secretChunks = yield* buildWithOlderRules(embedding)
          expect(secretChunks.length).toBe(2)
          expect(yield* storedRulesVersion).toBe(1)
          expect((yield* survivors).length).toBeGreaterThan(0)

          const kind = yield* makeRedactKind.pipe(Effect.provide(layer))
          const { exit } = yield* runKind(kind, Option.none())
          expect(exit._tag === "Success" && exit.value.counts).toMatchObject({ rows_redacted_again: 4 })
          expect(yield* survivors).toEqual([])
          expect(yield* storedRulesVersion).toBe(REDACTION_RULES_VERSION)

          // What is left reads as redacted text, hashed and cut as new text would be.
          const messages = yield* sql<{ id: number; text: string; text_sha256: string; redactions: number }>`
            SELECT id, text, text_sha256, redactions FROM messages WHERE text LIKE '%[REDACTED:%'`
          expect(messages.map((m) => m.text.match(/\[REDACTED:[a-z_]+\]/g))).toEqual([
            ["[REDACTED:discord_token]"],
            ["[REDACTED:private_key]"]
          ])
          for (const m of messages) {
            expect(m.text_sha256).toBe(sha256(m.text))
            expect(m.redactions).toBeGreaterThanOrEqual(1)
            const chunks = yield* sql<{ text: string; char_start: number; char_end: number; vf: string | null }>`
              SELECT text, char_start, char_end, vector_fingerprint AS vf FROM chunks WHERE message_id = ${m.id}`
            expect(chunks).toEqual([{ text: m.text, char_start: 0, char_end: m.text.length, vf: null }])
          }
          const ids = yield* embedding.vectors.listIds(embedding.fingerprint)
          expect(ids.filter((id) => secretChunks.includes(id))).toEqual([])
          const [update] = yield* sql<{
            tags: string
            source_text: string
            source_text_sha256: string
            content_sha256: string
            session_id: string
          }>`SELECT tags, source_text, source_text_sha256, content_sha256, session_id FROM authored_updates`
          expect(JSON.parse(update?.tags ?? "")).toEqual(["discord", "[REDACTED:discord_token]"])
          expect(update?.source_text).toBe("posted to https://discord.com/api/webhooks/[REDACTED:discord_webhook]")
          expect(update?.source_text_sha256).toBe(sha256(update?.source_text ?? ""))
          expect(update?.content_sha256).toBe(
            contentHash({
              session_id: update?.session_id ?? "",
              kind: "decision",
              authorship: "agent_generated",
              tags: JSON.parse(update?.tags ?? "[]"),
              text: messages[1]?.text ?? "",
              source_text: update?.source_text ?? null
            })
          )

          // Idempotent: a second run finds nothing more.
          const again = yield* runKind(kind, Option.none())
          expect(again.exit._tag === "Success" && again.exit.value.counts).toMatchObject({ rows_redacted_again: 0 })
        })
      ),
    60_000
  )

  it.effect("killed at every step, it resumes and ends the same; the version is stored last", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const { layer, embedding } = yield* services
        yield* buildWithOlderRules(embedding)
        const kind = yield* makeRedactKind.pipe(Effect.provide(layer))
        let checkpoint = Option.none<string>()
        let attempts = 0
        for (; attempts < 20; attempts++) {
          const { exit, saved } = yield* runKind(kind, checkpoint, 1)
          checkpoint = saved
          if (exit._tag === "Success") break
          expect(yield* storedRulesVersion).toBe(1)
        }
        expect(attempts).toBeGreaterThan(1)
        expect(yield* storedRulesVersion).toBe(REDACTION_RULES_VERSION)
        expect(yield* survivors).toEqual([])
      })
    )
  )
})
