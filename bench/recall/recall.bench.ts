import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { Reactivity } from "@effect/experimental"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { makeChunkTokenizer } from "../../layers/model-tokenizer-live.js"
import { NodeSafeFsLive } from "../../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../../layers/node-transcript-files.js"
import { OnnxModelRuntimeLive } from "../../layers/onnx-model-runtime.js"
import { makeSqliteVectorIndex } from "../../layers/sqlite-vector-index.js"
import { loadPackageSynonyms } from "../../programs/package-files.js"
import { chunkSpans } from "../../src/chunking/chunker.js"
import { describeSource } from "../../src/cli/search-render.js"
import { InstallationId } from "../../src/domain/installation-id.js"
import { DEFAULT_MODEL_SPEC } from "../../src/domain/model-spec.js"
import type { EmbedderShape } from "../../src/embedding/embedder.js"
import { ModelRuntime } from "../../src/embedding/model-runtime.js"
import { prepareFile } from "../../src/importer/import-file.js"
import { type SearchHit, SearchRequest, type SourceLocation, sourceLocationOf } from "../../src/retrieval/contract.js"
import { VECTOR_CANDIDATES } from "../../src/retrieval/history-reads.js"
import { chunksByIds, searchLexical } from "../../src/retrieval/lexical-search.js"
import { search } from "../../src/retrieval/search.js"
import { applyTimePhrase } from "../../src/retrieval/search-time-filter.js"
import { Synonyms } from "../../src/retrieval/synonyms.js"
import { initializeDatabase } from "../../src/store/identity.js"
import { type ImportChunking, ImportServices, WHOLE_MESSAGE_TOKENIZER } from "../../src/vectors/import-services.js"
import type { ChunkId, VectorIndexShape } from "../../src/vectors/vector-index.js"
import { makeFakeEmbedder } from "../../testing/fake-model.js"
import { TEST_MODEL_DATA_ENV, testModelData } from "../../testing/model-test-folder.js"
import { figure, line } from "../measure.js"
import {
  type Cited,
  classifyFixture,
  fixtureFiles,
  KINDS,
  type Kind,
  POSITIVE_KINDS,
  type Question,
  QuestionFile,
  readRephrasings,
  TIME_KIND
} from "./recall-history.js"
import { loadSentenceEncoder, SENTENCE_ENCODER_PACKAGE } from "./sentence-encoder.js"

/**
 * Recall quality over two labelled histories, each copied into a fresh home and indexed through
 * the importer (`prepareFile`):
 * - fixtures/recall-history with bench/recall/questions.json: real Codex and Claude Code rollout
 *   shapes, questions by kind (exact, identifier, paraphrase, multi-turn, negative), a held-out
 *   quarter. Words-only figures always; vector and fused figures only with a real model.
 * - fixtures/history with bench/recall/queries.json: the first 48 queries (one Codex format).
 * With BLCTX_MODEL_DIR naming a bge-small-en folder the vector figures are the product's; without
 * it a stand-in sentence encoder gives real but different ones (see `model`).
 */

const here = NodePath.dirname(fileURLToPath(import.meta.url))
// Compiled to dist/bench/recall: the sources sit three levels up.
const root = [NodePath.resolve(here, "..", ".."), NodePath.resolve(here, "..", "..", "..")].find((r) =>
  Fs.existsSync(NodePath.join(r, "fixtures", "recall-history"))
)

const Queries = Schema.Struct({
  queries: Schema.Array(
    Schema.Struct({ query: Schema.String, expect: Schema.Struct({ file: Schema.String, line: Schema.Int }) })
  )
})

const K = 10
/**
 * With BLCTX_RECALL_MISSES=1 the words-only misses of the tuned-on part are listed (question,
 * rank, the first result and the expected line). Never the held-out part's: what is tuned on
 * must not see them.
 */
const LIST_MISSES = process.env.BLCTX_RECALL_MISSES === "1"
/** A negative question is clean when none of its first CLEAN_DEPTH results cites tool output or injected context. */
const CLEAN_DEPTH = 5

interface Scores {
  n: number
  hit1: number
  hit5: number
  rr: number
}
const zero = (): Scores => ({ n: 0, hit1: 0, hit5: 0, rr: 0 })

/** Rank (1-based) of the first result that is one of `expected`, within the first K; 0 when none is. */
const rankOf = (ranked: ReadonlyArray<string>, expected: ReadonlyArray<string>): number => {
  const at = ranked.slice(0, K).findIndex((key) => expected.includes(key))
  return at + 1
}

const add = (into: Scores, rank: number) => {
  into.n++
  into.hit1 += rank === 1 ? 1 : 0
  into.hit5 += rank >= 1 && rank <= 5 ? 1 : 0
  into.rr += rank === 0 ? 0 : 1 / rank
}

const shown = (s: Scores) =>
  s.n === 0
    ? "no questions"
    : `${(s.hit1 / s.n).toFixed(3)} / ${(s.hit5 / s.n).toFixed(3)} / ${(s.rr / s.n).toFixed(3)}  (n=${s.n})`

/** Chunks cut as the product cuts them, by bge-small-en's tokenizer at `tokenizerJson`. */
const modelChunking = (tokenizerJson: string) =>
  Effect.map(
    makeChunkTokenizer(tokenizerJson),
    (tokenizer): ImportChunking => ({
      tokenizer: "bge-small-en",
      chunkAll: (texts) =>
        Effect.map(tokenizer.spansBatch(texts), (all) => all.map((spans, i) => chunkSpans(texts[i] ?? "", spans)))
    })
  )

/**
 * The vector side: bge-small-en from BLCTX_MODEL_DIR when given; else the stand-in sentence
 * encoder (a real model, not the product's) over bge-small-en's chunks from the test model
 * data; else the fake model, whose vector and fused figures mean nothing.
 */
const model = Effect.gen(function* () {
  const dir = process.env.BLCTX_MODEL_DIR
  if (dir !== undefined && dir !== "") {
    const runtime = yield* ModelRuntime
    const embedder = yield* runtime.load(dir, DEFAULT_MODEL_SPEC)
    const chunking = yield* modelChunking(NodePath.join(dir, "tokenizer.json"))
    return { embedder, chunking, label: "bge-small-en from BLCTX_MODEL_DIR", meaningful: true }
  }
  const data = testModelData()
  const encoder = yield* Effect.either(loadSentenceEncoder)
  if (data !== undefined && Either.isRight(encoder)) {
    const chunking = yield* modelChunking(NodePath.join(data, "fast-bge-small-en", "tokenizer.json"))
    const label = `stand-in sentence encoder (${SENTENCE_ENCODER_PACKAGE}, not the product's model)`
    return { embedder: encoder.right, chunking, label, meaningful: true }
  }
  const embedder: EmbedderShape = makeFakeEmbedder().embedder
  const chunking: ImportChunking = {
    tokenizer: WHOLE_MESSAGE_TOKENIZER,
    chunkAll: (texts) => Effect.succeed(texts.map((text) => [{ start: 0, end: text.length, text }]))
  }
  const why = Either.isLeft(encoder) ? encoder.left.message : `${TEST_MODEL_DATA_ENV} is not set`
  return {
    embedder,
    chunking,
    label: `fake model (word hashing; ${why}): vector and fused figures are not meaningful`,
    meaningful: false
  }
})
type Model = Effect.Effect.Success<typeof model>

/** A fresh database in `dir`, given to `f` as its SqlClient. */
const withDatabase = <A, E, R>(dir: string, f: (sql: SqliteClient.SqliteClient) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqliteClient.make({ filename: NodePath.join(dir, "context.db") })
    yield* initializeDatabase("context.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")).pipe(
      Effect.provideService(SqlClient.SqlClient, sql)
    )
    return yield* f(sql).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      // Searched as the daemon's query worker searches: with the package's thesaurus.
      Effect.provideService(Synonyms, loadPackageSynonyms())
    )
  })

/** The history's files copied under `dir/home` and imported into the database. */
const indexHistory = (
  sql: SqliteClient.SqliteClient,
  dir: string,
  history: string,
  files: ReadonlyArray<string>,
  m: Model
) =>
  Effect.gen(function* () {
    const vectors = yield* makeSqliteVectorIndex(sql)
    const { embedder, chunking } = m
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
    const home = NodePath.join(dir, "home")
    for (const file of files) {
      // Imported from a copy, so positions are the fixture's and the checkout is never written.
      const copy = NodePath.join(home, file)
      Fs.mkdirSync(NodePath.dirname(copy), { recursive: true })
      Fs.copyFileSync(NodePath.join(history, file), copy)
      const prepared = yield* Effect.scoped(prepareFile(copy)).pipe(Effect.provide(services))
      yield* sql.withTransaction(prepared.write)
    }
    return { vectors, home }
  })

/** The fixture-relative `file:line` a source is (or its description when it is not a transcript line). */
const citeOfSource = (home: string) => (source: SourceLocation) =>
  source.kind === "transcript_span"
    ? `${NodePath.relative(home, source.path).split(NodePath.sep).join("/")}:${source.line}`
    : describeSource(source)

/** One tuned-on miss: the question, where its line ranked (0: not in the first K) and what ranked first. */
const missLine = (
  q: Question,
  rank: number,
  results: ReadonlyArray<SearchHit>,
  ranked: ReadonlyArray<string>,
  expect: ReadonlyArray<Cited>
) => {
  const snippet = (text: string) => text.replace(/\s+/g, " ").slice(0, 140)
  const first = results[0]
  return [
    `  miss ${q.id} ${q.kind} rank ${rank}: ${q.query}`,
    `    first  ${ranked[0] ?? "nothing"}: ${first === undefined ? "" : snippet(first.text)}`,
    `    wanted ${expect.map((e) => `${e.file.slice(-20)}:${e.line}`).join(" ")}`
  ].join("\n")
}

const vectorHits = (m: Model, vectors: VectorIndexShape, query: string) =>
  Effect.gen(function* () {
    const [vector] = yield* m.embedder.embed([query], "query")
    return vector === undefined ? [] : yield* vectors.search(m.embedder.fingerprint, vector, VECTOR_CANDIDATES)
  })

/** The vector side alone: the hits' chunks in cosine order, as cited sources. */
const vectorSources = (hits: ReadonlyArray<{ readonly id: ChunkId }>) =>
  Effect.gen(function* () {
    const rows = new Map(
      (yield* chunksByIds(
        hits.map((h) => h.id),
        {}
      )).map((r) => [r.chunk_id as ChunkId, r])
    )
    return hits.flatMap((h) => {
      const row = rows.get(h.id)
      return row === undefined ? [] : [sourceLocationOf(row)]
    })
  })

/**
 * The searches measured, by what each is given: the vector candidates, and the rephrasings an
 * agent sends (bench/recall/rephrasings.json, decision 0029). The vector side alone is a side too.
 */
const SEARCHES = {
  "words-only": { vectors: false, rephrased: false },
  fused: { vectors: true, rephrased: false },
  "words-only, rephrased": { vectors: false, rephrased: true },
  "fused, rephrased": { vectors: true, rephrased: true }
} as const
type Searched = keyof typeof SEARCHES
type Side = Searched | "vector"

/** Words-only (and with a real model, fused) figures over fixtures/recall-history and questions.json. */
const measureRecallHistory = (dir: string, base: string, m: Model) =>
  withDatabase(dir, (sql) =>
    Effect.gen(function* () {
      const history = NodePath.join(base, "fixtures", "recall-history")
      const labelled = Schema.decodeUnknownSync(QuestionFile)(
        JSON.parse(Fs.readFileSync(NodePath.join(base, "bench", "recall", "questions.json"), "utf8"))
      )
      const files = fixtureFiles(history)
      const { vectors, home } = yield* indexHistory(sql, dir, history, files, m)
      const decisions = new Map(files.map((f) => [f, classifyFixture(history, f)]))
      /** Whether a cited `file:line` is tool output or injected context (anything the classifier does not index). */
      const isSetAside = (cite: string) => {
        const at = cite.lastIndexOf(":")
        const d = decisions.get(cite.slice(0, at))?.get(Number(cite.slice(at + 1)))
        return d !== undefined && d.decision !== "index"
      }
      const rephrasings = readRephrasings(NodePath.join(base, "bench", "recall"))
      const sides: ReadonlyArray<Side> = m.meaningful
        ? ["words-only", "vector", "fused", "words-only, rephrased", "fused, rephrased"]
        : ["words-only", "words-only, rephrased"]
      const table = new Map<string, Scores>()
      const cell = (side: Side, group: string) => {
        const key = `${side} ${group}`
        const found = table.get(key) ?? zero()
        table.set(key, found)
        return found
      }
      const clean = new Map<Side, { clean: number; n: number; dirty: Array<string> }>()
      const cite = citeOfSource(home)
      const reference = labelled.time_reference
      /** A question about time is read as the daemon reads it (`applyTimePhrase`), at the file's now and zone. */
      const requestFor = (q: Question, readTime: boolean, rephrased: boolean) => {
        const wordings = rephrased ? (rephrasings.get(q.id) ?? []) : []
        const asked = SearchRequest.make({
          query: q.query,
          limit: K,
          ...(wordings.length > 0 ? { rephrasings: wordings } : {})
        })
        return readTime ? applyTimePhrase(asked, Date.parse(reference.now), reference.time_zone).request : asked
      }
      const answerFor = (q: Question, side: Searched, readTime = false) =>
        Effect.gen(function* () {
          const request = requestFor(q, readTime, SEARCHES[side].rephrased)
          // The vector side embeds the question alone, as the daemon does.
          const hits = SEARCHES[side].vectors
            ? Option.some({ hits: yield* vectorHits(m, vectors, request.query) })
            : Option.none()
          return yield* search(request, hits, "")
        })
      /** What a side cites for a question, best first (the vector side reads no time phrase). */
      const rankedFor = (q: Question, side: Side, readTime = true) =>
        side === "vector"
          ? Effect.map(Effect.flatMap(vectorHits(m, vectors, q.query), vectorSources), (sources) =>
              sources.slice(0, K).map(cite)
            )
          : Effect.map(answerFor(q, side, readTime), (answer) => answer.results.map((h) => cite(h.source)))
      const misses: Array<string> = []
      for (const q of labelled.questions) {
        for (const side of sides) {
          if (q.kind === TIME_KIND) {
            const expected = q.expect.map((e) => `${e.file}:${e.line}`)
            const filtered = yield* rankedFor(q, side)
            add(cell(side, "time, phrase read as a filter"), rankOf(filtered, expected))
            add(cell(side, "time, phrase ranked as words"), rankOf(yield* rankedFor(q, side, false), expected))
            continue
          }
          const ranked = yield* rankedFor(q, side, false)
          if (q.kind === "negative") {
            const tally = clean.get(side) ?? { clean: 0, n: 0, dirty: [] }
            clean.set(side, tally)
            const distractors = new Set(q.distractors.map((d) => `${d.file}:${d.line}`))
            const isClean = !ranked.slice(0, CLEAN_DEPTH).some((c) => distractors.has(c) || isSetAside(c))
            tally.n++
            if (isClean) tally.clean++
            else tally.dirty.push(q.id)
            continue
          }
          const rank = rankOf(
            ranked,
            q.expect.map((e) => `${e.file}:${e.line}`)
          )
          for (const group of ["all", q.kind, q.heldout ? "held-out" : "tuned-on"]) add(cell(side, group), rank)
          if (LIST_MISSES && side === "words-only" && !q.heldout && rank !== 1)
            misses.push(missLine(q, rank, (yield* answerFor(q, side)).results, ranked, q.expect))
        }
      }
      for (const miss of misses) console.log(miss)
      const kinds: ReadonlyArray<Kind> = [...KINDS, TIME_KIND]
      const counts = kinds.map((k) => `${labelled.questions.filter((q) => q.kind === k).length} ${k}`)
      line(
        "recall-history",
        `${labelled.questions.length} questions (${counts.join(", ")}) over ${files.length} sessions`
      )
      line("model", m.label)
      for (const side of sides) {
        for (const group of [
          "all",
          ...POSITIVE_KINDS,
          "tuned-on",
          "held-out",
          "time, phrase read as a filter",
          "time, phrase ranked as words"
        ]) {
          line(`${side} ${group}: hit@1 / hit@5 / MRR@10`, shown(cell(side, group)))
        }
        const tally = clean.get(side) ?? { clean: 0, n: 0, dirty: [] }
        line(
          `${side} negatives clean (top ${CLEAN_DEPTH})`,
          `${tally.clean} / ${tally.n}${tally.dirty.length === 0 ? "" : `, not clean: ${tally.dirty.join(" ")}`}`
        )
        const all = cell(side, "all")
        figure(`${side} hit@5, ${all.n} questions`, all.hit5 / all.n, "", { goal: "≥ 0.95" })
        figure(`${side} MRR@10`, all.rr / all.n, "", { goal: "≥ 0.85" })
        const heldOut = cell(side, "held-out")
        figure(`${side} hit@5, held-out ${heldOut.n}`, heldOut.hit5 / heldOut.n, "", {
          goal: "within 0.03 of the tuned-on part"
        })
        figure(`${side} negatives clean`, tally.n === 0 ? 1 : tally.clean / tally.n, "", { goal: "1.00" })
      }
    })
  )

/** Lexical, vector and fused figures over fixtures/history and queries.json (the first 48 queries). */
const measureFirstQueries = (dir: string, base: string, m: Model) =>
  withDatabase(dir, (sql) =>
    Effect.gen(function* () {
      const history = NodePath.join(base, "fixtures", "history")
      const labelled = Schema.decodeUnknownSync(Queries)(
        JSON.parse(Fs.readFileSync(NodePath.join(base, "bench", "recall", "queries.json"), "utf8"))
      )
      const files = Fs.readdirSync(history).filter((f) => f.endsWith(".jsonl"))
      const { vectors } = yield* indexHistory(sql, dir, history, files, m)
      const totals = { lexical: zero(), vector: zero(), fused: zero() }
      const key = (path: string, lineNo: number) => `${NodePath.basename(path)}:${lineNo}`
      const keyOf = (source: SourceLocation) =>
        source.kind === "transcript_span" ? key(source.path, source.line) : describeSource(source)
      const run = Effect.gen(function* () {
        for (const q of labelled.queries) {
          const expected = [`${q.expect.file}:${q.expect.line}`]
          const lexical = yield* searchLexical(q.query, {}, K, 0)
          add(
            totals.lexical,
            rankOf(
              lexical.map((r) => key(r.path ?? "", r.line ?? 0)),
              expected
            )
          )
          // The vector side as the daemon takes it (VECTOR_CANDIDATES), for both figures.
          const hits = yield* vectorHits(m, vectors, q.query)
          add(totals.vector, rankOf((yield* vectorSources(hits)).slice(0, K).map(keyOf), expected))
          const fused = yield* search(SearchRequest.make({ query: q.query, limit: K }), Option.some({ hits }), "")
          add(
            totals.fused,
            rankOf(
              fused.results.map((h) => keyOf(h.source)),
              expected
            )
          )
        }
      })
      yield* run
      line(
        "first queries",
        `${labelled.queries.length} labelled queries over ${files.length} sessions (fixtures/history)`
      )
      for (const [name, t] of Object.entries(totals)) line(`${name}: hit@1 / hit@5 / MRR@10`, shown(t))
    })
  )

export const run = async () => {
  if (root === undefined) {
    line("recall", "fixtures/recall-history not found next to the build")
    return
  }
  const base = root
  const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-recall-"))
  const program = Effect.gen(function* () {
    const m = yield* model
    const inFolder = (name: string) => {
      const folder = NodePath.join(dir, name)
      Fs.mkdirSync(folder)
      return folder
    }
    yield* measureRecallHistory(inFolder("recall-history"), base, m)
    yield* measureFirstQueries(inFolder("history"), base, m)
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
