import * as Fs from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import {
  testModelData,
  testTokenizerPath,
  tinyModelFiles,
  tinyModelFolder,
  tinyModelSpec
} from "../layers/model-test-folder.js"
import { makeChunkTokenizer } from "../layers/model-tokenizer-live.js"
import { NodeSafeFsLive } from "../layers/node-safe-fs.js"
import { NodeTranscriptFilesLive } from "../layers/node-transcript-files.js"
import { OnnxModelRuntimeLive } from "../layers/onnx-model-runtime.js"
import { SqliteOpenerLive } from "../layers/sqlite-opener-live.js"
import { chunkSpans } from "../src/chunking/chunker.js"
import { InstallationId } from "../src/domain/installation-id.js"
import { ModelRuntime } from "../src/embedding/model-runtime.js"
import { DEFAULT_MODEL_SPEC } from "../src/embedding/model-spec.js"
import { prepareFile } from "../src/importer/import-file.js"
import { type ImportChunking, ImportServices, WHOLE_MESSAGE_TOKENIZER } from "../src/importer/import-services.js"
import { initializeDatabase } from "../src/store/identity.js"
import { SqliteOpener } from "../src/store/sqlite-opener.js"
import { line, mib } from "./measure.js"
import { writeSyntheticHistory } from "./synthetic-history.js"

const FILES = 100
const TURNS_PER_FILE = 100
const MODEL_SAMPLE = 2_000

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9

/** Chunking on the real bge-small-en tokenizer when its files are at hand, whole messages otherwise. */
const chunkingFor = Effect.gen(function* () {
  const data = testModelData()
  if (data === undefined) {
    const whole: ImportChunking = {
      tokenizer: WHOLE_MESSAGE_TOKENIZER,
      chunkAll: (texts) => Effect.succeed(texts.map((text) => [{ start: 0, end: text.length, text }]))
    }
    return { chunking: whole, label: "whole messages (BLCTX_TEST_MODEL_DATA unset)" }
  }
  const tokenizer = yield* makeChunkTokenizer(testTokenizerPath(data))
  const chunking: ImportChunking = {
    tokenizer: "bge-small-en",
    chunkAll: (texts) =>
      Effect.map(tokenizer.spansBatch(texts), (all) => all.map((spans, i) => chunkSpans(texts[i] ?? "", spans)))
  }
  return { chunking, label: "bge-small-en tokenizer, 384 tokens, 48 overlap" }
})

/** Embedding time of a sample of the chunks, with the real model when BLCTX_MODEL_DIR names one. */
const modelSecondsPerChunk = (texts: ReadonlyArray<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const runtime = yield* ModelRuntime
      const real = process.env.BLCTX_MODEL_DIR
      const data = testModelData()
      if (real !== undefined && real !== "") {
        const embedder = yield* runtime.load(real, DEFAULT_MODEL_SPEC)
        const start = process.hrtime.bigint()
        yield* embedder.embed(texts, "passage")
        return Option.some({ perChunk: seconds(start) / texts.length, label: "bge-small-en (BLCTX_MODEL_DIR)" })
      }
      if (data === undefined) return Option.none()
      const tiny = tinyModelFolder(data)
      yield* Effect.addFinalizer(() => Effect.sync(tiny.dispose))
      const embedder = yield* runtime.load(tiny.folder, tinyModelSpec(tinyModelFiles(data)))
      const start = process.hrtime.bigint()
      yield* embedder.embed(texts, "passage")
      return Option.some({
        perChunk: seconds(start) / texts.length,
        label: "tiny test encoder (8 dims): far faster than bge-small-en, so this ratio flatters the model"
      })
    })
  ).pipe(Effect.provide(OnnxModelRuntimeLive))

/**
 * The importer without model time: parse, classify, redact, chunk and store a synthetic
 * 10,000-turn history; then a second pass over the unchanged files; then the model's time for
 * the same chunks, as the ratio the design budgets (overhead under 10% of embedding time).
 */
export const run = async () => {
  const dir = Fs.mkdtempSync(NodePath.join(tmpdir(), "blctx-bench-import-"))
  try {
    const paths = writeSyntheticHistory(dir, FILES, TURNS_PER_FILE)
    const bytes = paths.reduce((n, p) => n + Fs.statSync(p).size, 0)
    const program = Effect.gen(function* () {
      const { chunking, label } = yield* chunkingFor
      const opener = yield* SqliteOpener
      const sql = yield* opener.open({ filename: NodePath.join(dir, "context.db"), readonly: false })
      yield* initializeDatabase("context.db", InstallationId.make("6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b")).pipe(
        Effect.provideService(SqlClient.SqlClient, sql)
      )
      const services = Layer.succeed(ImportServices, { chunking, embedding: Option.none() })
      const importAll = Effect.forEach(
        paths,
        (path) =>
          Effect.scoped(prepareFile(path)).pipe(
            Effect.tap((prepared) => sql.withTransaction(prepared.write)),
            Effect.map((prepared) => prepared.report)
          ),
        { concurrency: 1 }
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provide(services))

      const first = process.hrtime.bigint()
      const reports = yield* importAll
      const importSeconds = seconds(first)
      const messages = reports.reduce((n, r) => n + (r.counts.messages_added ?? 0), 0)
      const chunks = reports.reduce((n, r) => n + (r.counts.chunks_added ?? 0), 0)

      const second = process.hrtime.bigint()
      const again = yield* importAll
      const skipSeconds = seconds(second)
      const unchanged = again.filter((r) => r.status === "unchanged").length

      line("history", `${FILES} files, ${FILES * TURNS_PER_FILE} turns, ${mib(bytes)}`)
      line("chunking", label)
      line("import (no model): messages/s", `${(messages / importSeconds).toFixed(0)} (${messages} messages)`)
      line("import (no model): chunks/s", `${(chunks / importSeconds).toFixed(0)} (${chunks} chunks)`)
      line("import (no model): MiB/s", (bytes / 1024 / 1024 / importSeconds).toFixed(1))
      line(
        "unchanged files skipped: files/s",
        `${(unchanged / skipSeconds).toFixed(0)} (${unchanged}/${paths.length} skipped)`
      )

      const sample = yield* sql<{ text: string }>`SELECT text FROM chunks ORDER BY id LIMIT ${MODEL_SAMPLE}`
      const model = yield* modelSecondsPerChunk(sample.map((r) => r.text))
      Option.match(model, {
        onNone: () =>
          line("pipeline overhead / model time", "no model at hand (set BLCTX_TEST_MODEL_DATA or BLCTX_MODEL_DIR)"),
        onSome: (m) => {
          const modelSeconds = m.perChunk * chunks
          line("model time for these chunks (estimated)", `${modelSeconds.toFixed(1)} s with ${m.label}`)
          line("pipeline overhead / model time", `${((importSeconds / modelSeconds) * 100).toFixed(1)}%`)
        }
      })
      line("peak RSS", mib(process.resourceUsage().maxRSS * 1024))
    })
    await Effect.runPromise(
      Effect.scoped(program).pipe(
        Effect.provide(Layer.mergeAll(SqliteOpenerLive, NodeSafeFsLive, NodeTranscriptFilesLive))
      )
    )
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}
