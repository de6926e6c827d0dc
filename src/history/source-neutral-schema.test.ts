import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { passageContextId } from "../domain/context-id.js"
import { InstallationId } from "../domain/installation-id.js"
import { importOnce } from "../importer/history-db.test-support.js"
import { expandContext } from "../retrieval/context.js"
import { Score, SearchRequest } from "../retrieval/contract.js"
import { matchingWords, matchOf, rankedChunks } from "../retrieval/lexical-search.js"
import { recentTurns } from "../retrieval/recent.js"
import { search, toHit } from "../retrieval/search.js"
import { initializeDatabase, readIdentity } from "../store/identity.js"
import { CURRENT_SCHEMA_VERSION } from "../store/migrations.js"
import { SqliteOpener } from "../store/sqlite-opener.js"
import { MigrationTestLayer, migrateThrough, useTempDatabase } from "./migration.test-support.js"

const history = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "history")
const codex = NodePath.resolve(import.meta.dirname, "..", "..", "fixtures", "codex")
const FILES = [
  ...["session-1.jsonl", "session-2.jsonl", "session-3.jsonl", "session-4.jsonl"].map((f) => NodePath.join(history, f)),
  NodePath.join(codex, "fork.jsonl"),
  NodePath.join(codex, "subagent.jsonl")
]
const QUERIES = [
  "what did we decide about deploying the shop api",
  "why not mongodb for orders",
  "flaky checkout test cause",
  "deploy",
  "review"
]

const temp = useTempDatabase("blctx-migration-4-")
const withDatabase = temp.withDatabase
const TestLayer = MigrationTestLayer
const migrateThrough3 = migrateThrough(3)

/**
 * The previous release's reads, frozen here: what `search`, `recent` and `context` read at schema
 * 3 (on the words today's search matches on, common ones left out, so the two orders compare).
 */
const v3Search = (query: string) =>
  Effect.flatMap(
    Effect.zip(SqlClient.SqlClient, matchingWords(query)),
    ([sql, words]) => sql<{
      chunk_id: number
      message_id: number
      char_start: number
      char_end: number
      text: string
      source_type: string
      path: string
      line: number
      byte_start: number
      byte_end: number
      rank: number
    }>`
      SELECT c.id AS chunk_id, c.message_id, c.char_start, c.char_end, c.text, m.source_type, f.path, m.line, m.byte_start, m.byte_end, bm25(chunks_fts) AS rank
      FROM chunks_fts
      JOIN chunks c ON c.id = chunks_fts.rowid
      JOIN messages m ON m.id = c.message_id
      JOIN source_files f ON f.id = m.source_file_id
      WHERE chunks_fts MATCH ${matchOf(words) ?? ""}
      ORDER BY rank ASC, (m.source_type = 'authored_update') DESC, m.timestamp DESC, c.id ASC
      LIMIT 10`
  )
const v3Messages = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{
    id: number
    session_id: string | null
    turn_number: number
    text: string
    path: string
    line: number
    byte_start: number
    byte_end: number
  }>`
    SELECT m.id, m.session_id, m.turn_number, m.text, f.path, m.line, m.byte_start, m.byte_end
    FROM messages m JOIN source_files f ON f.id = m.source_file_id
    WHERE m.source_type = 'codex_transcript'
    ORDER BY m.source_file_id, m.line, m.id`
)

/** The citation a transcript message of release 3 has from release 4 on. */
const spanOf = (
  m: { path: string; line: number; byte_start: number; byte_end: number } | undefined
): Record<string, unknown> | undefined =>
  m && {
    kind: "transcript_span",
    agent: "codex",
    path: m.path,
    line: m.line,
    byte_start: m.byte_start,
    byte_end: m.byte_end
  }

/** Every row of a table, in id order, as stored. */
const rows = (table: string, order: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM ${sql(table)} ORDER BY ${sql.literal(order)}`)

const schemaObjects = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ type: string; name: string }>`
    SELECT type, name FROM sqlite_master
    WHERE tbl_name IN ('messages', 'chunks') AND name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name`
)

/**
 * Rows as release 3 stored them: the files are imported by today's importer into a scratch
 * database (the importer writes today's columns), and every column schema 3 has is copied into
 * the schema-3 database on `sql`, ids included; its triggers fill the FTS index as they did.
 */
const importIntoSchema3 = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scratch = NodePath.join(temp.dir(), "scratch.db")
    yield* Effect.scoped(
      Effect.gen(function* () {
        const current = yield* Effect.flatMap(SqliteOpener, (o) => o.open({ filename: scratch, readonly: false }))
        yield* Effect.provideService(
          Effect.gen(function* () {
            yield* initializeDatabase("scratch.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"))
            for (const file of files) yield* importOnce(file)
          }),
          SqlClient.SqlClient,
          current
        )
      })
    )
    yield* sql.unsafe(`ATTACH DATABASE '${scratch.replaceAll("'", "''")}' AS scratch`)
    for (const table of ["source_files", "sessions", "messages", "chunks"]) {
      const columns = (yield* sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`).map((c) => c.name)
      const list = columns.join(", ")
      yield* sql.unsafe(`INSERT INTO main.${table} (${list}) SELECT ${list} FROM scratch.${table} ORDER BY rowid`)
    }
    yield* sql.unsafe("DETACH DATABASE scratch")
  })

describe("migration 4 (source-neutral messages)", () => {
  it.effect("a database created by the previous schema upgrades in place and answers the same searches", () =>
    Effect.gen(function* () {
      // Release 3: its schema, real history imported by the importer, vectors on some chunks,
      // and the newest message deleted, so the AUTOINCREMENT high-water mark is above every id.
      const before = yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* migrateThrough3
          yield* importIntoSchema3(FILES)
          yield* sql`UPDATE chunks SET vector_fingerprint = 'fp' WHERE id % 2 = 0`
          const newest = (yield* sql<{ id: number }>`SELECT max(id) AS id FROM messages`)[0]?.id ?? 0
          yield* sql`DELETE FROM chunks WHERE message_id = ${newest}`
          yield* sql`DELETE FROM messages WHERE id = ${newest}`
          const searches = yield* Effect.forEach(QUERIES, v3Search)
          return {
            version: (yield* readIdentity("context.db")).schemaVersion,
            messages: yield* rows("messages", "id"),
            chunks: yield* rows("chunks", "id"),
            removed: yield* rows("removed_chunks", "chunk_id"),
            sequences: yield* rows("sqlite_sequence", "name"),
            objects: yield* schemaObjects,
            searches,
            turns: yield* v3Messages
          }
        })
      )
      expect(before.version).toBe(3)
      expect(before.searches.every((answer) => answer.length > 0)).toBe(true)
      expect(before.removed.length).toBeGreaterThan(0)

      // Upgrade as `blctx install` does: every migration not yet applied, then the identity.
      yield* withDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* initializeDatabase("context.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"))
          expect((yield* readIdentity("context.db")).schemaVersion).toBe(CURRENT_SCHEMA_VERSION)
          expect(CURRENT_SCHEMA_VERSION).toBeGreaterThanOrEqual(4)

          // Every row kept as it was, ids included; rows of release 3 are Codex transcript spans.
          const messages = yield* rows("messages", "id")
          expect(
            messages.map((m) => ({ ...m, agent: undefined, note_id: undefined, note_revision: undefined }))
          ).toEqual(
            before.messages.map((m) => ({ ...m, agent: undefined, note_id: undefined, note_revision: undefined }))
          )
          expect(new Set(messages.map((m) => `${m.source_type}/${m.agent}/${m.note_id}/${m.note_revision}`))).toEqual(
            new Set(["codex_transcript/codex/null/null"])
          )
          expect(yield* rows("chunks", "id")).toEqual(before.chunks)
          expect(yield* rows("removed_chunks", "chunk_id")).toEqual(before.removed)
          expect(yield* rows("sqlite_sequence", "name")).toEqual(before.sequences)
          expect(yield* schemaObjects).toEqual(before.objects)
          // The FTS index (content: chunks) was not touched and agrees with its content table.
          yield* sql`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`
          expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
          expect((yield* sql<{ table: string }>`PRAGMA foreign_key_list(chunks)`).map((f) => f.table)).toEqual([
            "messages"
          ])

          // The same searches: same chunks in the same order, same texts, citations and scores.
          for (const [index, query] of QUERIES.entries()) {
            // BM25's own order (the candidates today's search reranks), on today's read of the rows.
            const words = yield* matchingWords(query)
            const ranked = yield* rankedChunks(matchOf(words) ?? "", {}, 10, 0, "join all")
            const answer = { results: ranked.map((row) => toHit(row, new Score({ kind: "bm25", value: row.rank }))) }
            const expected = before.searches[index] ?? []
            expect(answer.results.map((h) => h.context_id)).toEqual(
              expected.map((r) => passageContextId(r.message_id, r))
            )
            expect(
              answer.results.map((h) => ({
                text: h.text,
                source_type: h.source_type,
                source: h.source,
                bm25: h.score.value
              }))
            ).toEqual(
              expected.map((r) => ({
                text: r.text,
                source_type: r.source_type,
                source: spanOf(r),
                bm25: r.rank
              }))
            )
          }

          // Recent: the same turns, each with its messages in file order and the same citations.
          const v3ById = new Map(before.turns.map((m) => [`m${m.id}`, m]))
          const v3Turn = (m: { session_id: string | null; turn_number: number }) => `${m.session_id}/${m.turn_number}`
          const recent = yield* recentTurns({ sinceMs: null, untilMs: null }, null, 200, 0)
          expect(recent.turns.map(v3Turn).sort()).toEqual([...new Set(before.turns.map(v3Turn))].sort())
          for (const turn of recent.turns) {
            const expected = before.turns.filter((m) => v3Turn(m) === v3Turn(turn))
            expect(turn.message_count).toBe(expected.length)
            expect(turn.messages.map((m) => m.context_id)).toEqual(
              expected.slice(0, turn.messages.length).map((m) => `m${m.id}`)
            )
            for (const m of turn.messages) {
              const v3 = v3ById.get(m.context_id)
              expect(v3?.text.startsWith(m.text)).toBe(true)
              expect(m.source).toEqual(spanOf(v3))
            }
          }

          // Context: each hit's transcript from its first message, in file order, same ids and texts.
          const top = yield* search(SearchRequest.make({ query: QUERIES[0] ?? "" }), Option.none(), "lexical")
          for (const hit of top.results.slice(0, 3)) {
            const context = yield* expandContext({ context_id: hit.context_id, offset: 0, limit: 200, char_offset: 0 })
            const file = hit.source.kind === "transcript_span" ? hit.source.path : ""
            const expected = before.turns.filter((m) => m.path === file).slice(0, context.messages.length)
            expect(context.messages.map((m) => m.context_id)).toEqual(expected.map((m) => `m${m.id}`))
            for (const m of context.messages) {
              const v3 = v3ById.get(m.context_id)
              expect(m.text_truncated ? v3?.text.startsWith(m.text) : m.text === v3?.text).toBe(true)
              expect([m.source_type, m.source]).toEqual(["codex_transcript", spanOf(v3)])
            }
          }

          // New rows continue after the highest id ever given, not the highest kept.
          const seq = before.sequences.find((s) => s.name === "messages")?.seq as number
          const file = (yield* sql<{ id: number }>`SELECT min(id) AS id FROM source_files`)[0]?.id ?? 0
          const inserted = yield* sql<{ id: number; agent: string; source_type: string }>`
            INSERT INTO messages (source_file_id, turn_number, role, kind, text, text_sha256, redactions,
                                  line, byte_start, byte_end)
            VALUES (${file}, 1, 'user', 'request', 'appended', 'x', 0, 999, 99990, 99999)
            RETURNING id, agent, source_type`
          expect(inserted[0]).toEqual({ id: seq + 1, agent: "codex", source_type: "codex_transcript" })
        })
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("holds any source type and a message without a source file; provenance is exactly one kind", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* initializeDatabase("context.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"))
        yield* importOnce(NodePath.join(history, "session-1.jsonl"))
        const file = (yield* sql<{ id: number }>`SELECT id FROM source_files`)[0]?.id ?? 0
        const insert = (columns: Record<string, unknown>) =>
          sql`INSERT INTO messages ${sql.insert({
            role: "user",
            kind: "note",
            text: "t",
            text_sha256: "x",
            redactions: 0,
            ...columns
          })}`.pipe(Effect.as("stored"), Effect.catchAll(Effect.succeed))

        // An open set: no CHECK names the source types.
        expect(
          yield* insert({
            source_type: "claude_transcript",
            agent: "claude",
            source_file_id: file,
            line: 1,
            byte_start: 100_000,
            byte_end: 100_010
          })
        ).toBe("stored")
        expect(yield* insert({ source_type: "authored_update", agent: null, note_id: "n1", note_revision: 1 })).toBe(
          "stored"
        )
        // Half a provenance, both, or neither: refused.
        const refused = [
          { note_id: "n2" },
          { note_id: "n2", note_revision: 1, source_file_id: file, line: 1, byte_start: 200_000, byte_end: 200_001 },
          { source_type: "authored_update" },
          { source_file_id: file, line: 1, byte_start: 300_000 },
          { source_file_id: file, agent: null, line: 1, byte_start: 300_000, byte_end: 300_001 }
        ]
        for (const columns of refused) expect(yield* insert(columns)).not.toBe("stored")
        // A note revision is stored once.
        expect(yield* insert({ source_type: "authored_update", note_id: "n1", note_revision: 1 })).not.toBe("stored")
        // Deleting a source file still removes its messages and their chunks (foreign keys kept).
        yield* sql`DELETE FROM source_files`
        expect(yield* sql`SELECT note_id FROM messages`).toEqual([{ note_id: "n1" }])
        expect(yield* sql`SELECT count(*) AS n FROM chunks`).toEqual([{ n: 0 }])
      })
    ).pipe(Effect.provide(TestLayer))
  )
})
