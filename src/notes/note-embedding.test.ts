import * as Fs from "node:fs"
import { SqlClient } from "@effect/sql"
import type { SqliteClient } from "@effect/sql-sqlite-node"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { TokenizerError } from "../chunking/chunk-tokenizer.js"
import { EmbedError } from "../embedding/embedder.js"
import { makeTempDir, withHistoryDb } from "../importer/history-db.test-support.js"
import { type ImportChunking, type ImportEmbedding, wholeMessageChunking } from "../vectors/import-services.js"
import { storedUpdate } from "./note-content.js"
import { chunkNote, embedMessageChunks } from "./note-embedding.js"
import { LogUpdateRequest } from "./notes-contract.js"
import { makeNotesStore } from "./notes-store.js"

let dir: string
beforeEach(() => {
  dir = makeTempDir("blctx-note-embedding-")
})
afterEach(() => Fs.rmSync(dir, { recursive: true, force: true }))

/** Three words per chunk, with exact character ranges. */
const threeWords: ImportChunking = {
  tokenizer: "three-words",
  chunkAll: (texts) =>
    Effect.sync(() =>
      texts.map((text) => {
        const words = [...text.matchAll(/\S+/g)]
        const pieces = []
        for (let i = 0; i < words.length; i += 3) {
          const first = words[i]
          const last = words[Math.min(i + 2, words.length - 1)]
          if (first?.index === undefined || last?.index === undefined) continue
          const end = last.index + last[0].length
          pieces.push({ start: first.index, end, text: text.slice(first.index, end) })
        }
        return pieces
      })
    )
}

const TEXT = "Decision: notes are chunked like messages and embedded after commit."

/** A note of three chunks logged through the store, and the fake model on the same connection. */
const loggedNote = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const store = makeNotesStore({ sql, database: "context.db" })
  const session = yield* store.openSession({ binding_key: "0199a000-0000-7000-8000-000000000001" })
  const update = storedUpdate(
    Schema.decodeUnknownSync(LogUpdateRequest)({
      session_id: session.session_id,
      update_id: "0199a000-0000-7000-8000-000000000002",
      text: TEXT
    })
  )
  const chunks = yield* chunkNote(threeWords, update.text)
  const logged = yield* store.logUpdate(update, chunks)
  const vectors = yield* makeSqliteVectorIndex(sql as SqliteClient.SqliteClient)
  const { embedder, stats } = makeFakeEmbedder()
  const embedding: ImportEmbedding = {
    fingerprint: embedder.fingerprint,
    embed: (texts) => embedder.embed(texts, "passage"),
    embedQuery: (text) => Effect.map(embedder.embed([text], "query"), (v) => v[0] ?? new Float32Array(embedder.dims)),
    vectors
  }
  return { sql, logged, embedding, stats }
})

const fingerprints = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ ordinal: number; tokenizer: string; vector_fingerprint: string | null }>`
    SELECT ordinal, tokenizer, vector_fingerprint FROM chunks ORDER BY ordinal`
)

describe("a note's chunks and vectors", () => {
  it.effect("are cut by the current chunking and stored pending, then embedded after the commit", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const { sql, logged, embedding, stats } = yield* loggedNote
        const key = embedding.fingerprint.key
        expect((yield* fingerprints).map((c) => [c.tokenizer, c.vector_fingerprint])).toEqual([
          ["three-words", null],
          ["three-words", null],
          ["three-words", null],
          ["three-words", null]
        ])
        // One chunk already has this model's vector, one an older model's: only three are embedded.
        yield* sql`UPDATE chunks SET vector_fingerprint = ${key} WHERE ordinal = 0`
        yield* sql`UPDATE chunks SET vector_fingerprint = 'older-model' WHERE ordinal = 1`
        expect(yield* embedMessageChunks(sql, logged.messageId, embedding)).toBe(3)
        expect(stats.texts).toBe(3)
        expect((yield* fingerprints).every((c) => c.vector_fingerprint === key)).toBe(true)
        expect(yield* embedding.vectors.count(embedding.fingerprint)).toBe(3)
        // Nothing left to do: no model call, no write.
        expect(yield* embedMessageChunks(sql, logged.messageId, embedding)).toBe(0)
        expect(stats.calls).toBe(1)
      })
    )
  )

  it.effect("a failing model leaves every chunk pending, for the daemon's repair", () =>
    withHistoryDb(
      dir,
      Effect.gen(function* () {
        const { sql, logged, embedding } = yield* loggedNote
        const broken: ImportEmbedding = {
          ...embedding,
          embed: () => Effect.fail(new EmbedError({ folder: "/models/fake", message: "bad graph" }))
        }
        const result = yield* Effect.either(embedMessageChunks(sql, logged.messageId, broken))
        expect(result._tag).toBe("Left")
        expect((yield* fingerprints).every((c) => c.vector_fingerprint === null)).toBe(true)
      })
    )
  )

  it.effect("a tokenizer that fails stores the note as one whole-message chunk", () =>
    Effect.gen(function* () {
      const failing: ImportChunking = {
        tokenizer: "model@rev",
        chunkAll: () => Effect.fail(new TokenizerError({ path: "/models/tokenizer.json", message: "broken" }))
      }
      expect(yield* chunkNote(failing, TEXT)).toEqual({
        tokenizer: wholeMessageChunking.tokenizer,
        pieces: [{ start: 0, end: TEXT.length, text: TEXT }]
      })
      expect(yield* chunkNote(wholeMessageChunking, TEXT)).toEqual({
        tokenizer: "whole-message",
        pieces: [{ start: 0, end: TEXT.length, text: TEXT }]
      })
    })
  )
})
