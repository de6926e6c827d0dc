import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Reactivity } from "@effect/experimental"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Option, Schema } from "effect"
import { makeChunkTokenizer } from "../../layers/model-tokenizer-live.js"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { OnnxModelRuntimeLive } from "../../layers/onnx-model-runtime.js"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { chunkSpans } from "../../src/chunking/chunker.js"
import { describeSource } from "../../src/cli/search-render.js"
import { InstallationId } from "../../src/domain/installation-id.js"
import { DEFAULT_MODEL_SPEC } from "../../src/domain/model-spec.js"
import type { EmbedderShape } from "../../src/embedding/embedder.js"
import { ModelRuntime } from "../../src/embedding/model-runtime.js"
import { prepareFile } from "../../src/importer/import-file.js"
import { SearchRequest } from "../../src/retrieval/contract.js"
import { chunksByIds, searchLexical } from "../../src/retrieval/lexical-search.js"
import { search } from "../../src/retrieval/search.js"
import { initializeDatabase } from "../../src/store/identity.js"
import { type ImportChunking, ImportServices, WHOLE_MESSAGE_TOKENIZER } from "../../src/vectors/import-services.js"
import type { ChunkId } from "../../src/vectors/vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { line } from "../measure.js"

/**
 * Recall quality over the project's own labelled history (fixtures/history, bench/recall/queries.json):
 * hit@1, hit@5 and MRR@10 for lexical-only, vector-only and fused retrieval. With
 * BLCTX_MODEL_DIR naming a bge-small-en folder the vector figures are real; without it the
 * deterministic fake model stands in and only the lexical figures mean anything.
 */

const here = NodePath.dirname(fileURLToPath(import.meta.url))
// Compiled to dist/bench/recall: the sources sit three levels up.
const root = [NodePath.resolve(here, "..", ".."), NodePath.resolve(here, "..", "..", "..")].find((r) =>
  Fs.existsSync(NodePath.join(r, "fixtures", "history"))
)

const Queries = Schema.Struct({
  queries: Schema.Array(
    Schema.Struct({ query: Schema.String, expect: Schema.Struct({ file: Schema.String, line: Schema.Int }) })
  )
})

const K = 10

interface Scores {
  hit1: number
  hit5: number
  rr: number
}

const score = (ranked: ReadonlyArray<string>, expected: string): Scores => {
  const rank = ranked.slice(0, K).indexOf(expected) + 1
  return { hit1: rank === 1 ? 1 : 0, hit5: rank >= 1 && rank <= 5 ? 1 : 0, rr: rank === 0 ? 0 : 1 / rank }
}

const model = Effect.gen(function* () {
  const dir = process.env.BLCTX_MODEL_DIR
  if (dir !== undefined && dir !== "") {
    const runtime = yield* ModelRuntime
    const embedder = yield* runtime.load(dir, DEFAULT_MODEL_SPEC)
    const tokenizer = yield* makeChunkTokenizer(NodePath.join(dir, "tokenizer.json"))
    const chunking: ImportChunking = {
      tokenizer: "bge-small-en",
      chunkAll: (texts) =>
        Effect.map(tokenizer.spansBatch(texts), (all) => all.map((spans, i) => chunkSpans(texts[i] ?? "", spans)))
    }
    return { embedder, chunking, label: "bge-small-en from BLCTX_MODEL_DIR", meaningful: true }
  }
  const embedder: EmbedderShape = makeFakeEmbedder().embedder
  const chunking: ImportChunking = {
    tokenizer: WHOLE_MESSAGE_TOKENIZER,
    chunkAll: (texts) => Effect.succeed(texts.map((text) => [{ start: 0, end: text.length, text }]))
  }
  return {
    embedder,
    chunking,
    label: "fake model (word hashing): vector and fused figures are not meaningful",
    meaningful: false
  }
})

export const run = async () => {
  if (root === undefined) {
    line("recall", "fixtures/history not found next to the build")
    return
  }
  const labelled = Schema.decodeUnknownSync(Queries)(
    JSON.parse(Fs.readFileSync(NodePath.join(root, "bench", "recall", "queries.json"), "utf8"))
  )
  const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-recall-"))
  const program = Effect.gen(function* () {
    const sql = yield* SqliteClient.make({ filename: NodePath.join(dir, "context.db") })
    yield* initializeDatabase("context.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")).pipe(
      Effect.provideService(SqlClient.SqlClient, sql)
    )
    yield* measure(sql, labelled).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  })
  const measure = (sql: SqliteClient.SqliteClient, labelled: typeof Queries.Type) =>
    Effect.gen(function* () {
      const vectors = yield* makeSqliteVectorIndex(sql)
      const { embedder, chunking, label } = yield* model
      const services = Layer.succeed(ImportServices, {
        chunking,
        embedding: Option.some({
          fingerprint: embedder.fingerprint,
          embed: (texts: ReadonlyArray<string>) => embedder.embed(texts, "passage"),
          embedQuery: (text: string) =>
            Effect.map(embedder.embed([text], "query"), (vectors) => vectors[0] ?? new Float32Array(embedder.dims)),
          vectors
        })
      })
      const files = Fs.readdirSync(NodePath.join(root, "fixtures", "history")).filter((f) => f.endsWith(".jsonl"))
      for (const file of files) {
        // Imported from a copy, so positions are the fixture's and the checkout is never written.
        const copy = NodePath.join(dir, file)
        Fs.copyFileSync(NodePath.join(root, "fixtures", "history", file), copy)
        const prepared = yield* Effect.scoped(prepareFile(copy)).pipe(Effect.provide(services))
        yield* sql.withTransaction(prepared.write)
      }

      const totals = {
        lexical: { hit1: 0, hit5: 0, rr: 0 },
        vector: { hit1: 0, hit5: 0, rr: 0 },
        fused: { hit1: 0, hit5: 0, rr: 0 }
      }
      const add = (into: Scores, s: Scores) => {
        into.hit1 += s.hit1
        into.hit5 += s.hit5
        into.rr += s.rr
      }
      const key = (path: string, lineNo: number) => `${NodePath.basename(path)}:${lineNo}`
      for (const q of labelled.queries) {
        const expected = `${q.expect.file}:${q.expect.line}`
        const lexical = yield* searchLexical(q.query, {}, K, 0)
        add(
          totals.lexical,
          score(
            lexical.map((r) => key(r.path ?? "", r.line ?? 0)),
            expected
          )
        )
        const [vector] = yield* embedder.embed([q.query], "query")
        const hits = vector === undefined ? [] : yield* vectors.search(embedder.fingerprint, vector, K)
        const rows = new Map(
          (yield* chunksByIds(
            hits.map((h) => h.id),
            {}
          )).map((r) => [r.chunk_id as ChunkId, r])
        )
        add(
          totals.vector,
          score(
            hits.flatMap((h) => {
              const r = rows.get(h.id)
              return r === undefined ? [] : [key(r.path ?? "", r.line ?? 0)]
            }),
            expected
          )
        )
        const fused = yield* search(SearchRequest.make({ query: q.query, limit: K }), Option.some({ hits }), "")
        add(
          totals.fused,
          score(
            fused.results.map((h) =>
              h.source.kind === "transcript_span" ? key(h.source.path, h.source.line) : describeSource(h.source)
            ),
            expected
          )
        )
      }
      const n = labelled.queries.length
      line("queries / messages indexed", `${n} labelled queries over ${files.length} sessions`)
      line("model", label)
      for (const [name, t] of Object.entries(totals)) {
        line(
          `${name}: hit@1 / hit@5 / MRR@10`,
          `${(t.hit1 / n).toFixed(3)} / ${(t.hit5 / n).toFixed(3)} / ${(t.rr / n).toFixed(3)}`
        )
      }
    })
  try {
    await Effect.runPromise(
      Effect.scoped(program).pipe(
        Effect.provide(Layer.mergeAll(NodeSafeFsLive, NodeTranscriptFilesLive, OnnxModelRuntimeLive, Reactivity.layer))
      )
    )
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}
