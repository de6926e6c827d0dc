import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { EmbeddingModel, FlagEmbedding } from "fastembed"
import { DEFAULT_MODEL_SPEC, ModelSpec } from "../src/domain/model-spec.js"
import { fingerprintOf } from "../src/embedding/fingerprint.js"
import { batchesByLength } from "../src/embedding/pooling.js"
import { checkModel } from "../src/embedding/sanity.js"
import { testModelData, tinyModelFiles, tinyModelFolder, tinyModelSpec } from "../testing/model-test-folder.js"
import { loadOnnxEmbedder, loadTokenizer } from "./onnx-model-runtime.js"

const data = testModelData()
const modelDir = process.env.BLCTX_MODEL_DIR || undefined

const TEXTS = [
  "hello",
  "How do I undo the last git commit without losing my changes?",
  "The importer reads transcripts line by line, classifies each record and stores messages with provenance.",
  "ünïcödé and emoji 😀 are tokenized too",
  "short one"
]

const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).toBe(b.length)
  let m = 0
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] ?? 0) - (b[i] ?? 0)))
  return m
}

const fastembed = async (folder: string, maxLength: number) =>
  FlagEmbedding.init({
    model: EmbeddingModel.CUSTOM,
    modelAbsoluteDirPath: folder,
    modelName: "model_optimized.onnx",
    maxLength,
    showDownloadProgress: false
  })

const collect = async (gen: AsyncGenerator<Array<number[] | Float32Array>>) => {
  const out: Array<ArrayLike<number>> = []
  for await (const batch of gen) out.push(...batch)
  return out
}

/** Token count (with [CLS]/[SEP]) of the longest text, i.e. the padding length of its batch. */
const longestTokens = (folder: string, texts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const tokenizer = yield* loadTokenizer(folder, 512)
    const lengths = yield* Effect.promise(() => Promise.all(texts.map((t) => tokenizer.encode(t))))
    return Math.max(...lengths.map((e) => e.getLength()))
  })

describe("ONNX embedder with the tiny test model (BLCTX_TEST_MODEL_DATA)", () => {
  const spec = data === undefined ? DEFAULT_MODEL_SPEC : tinyModelSpec(tinyModelFiles(data))

  it.scoped.skipIf(!data)("equals FastEmbed's passage vectors within 1e-5 at the same padding length", () =>
    Effect.gen(function* () {
      const { folder, dispose } = tinyModelFolder(data ?? "")
      yield* Effect.addFinalizer(() => Effect.sync(dispose))
      const prefixed = TEXTS.map((t) => `passage: ${t}`)
      const longest = yield* longestTokens(folder, prefixed)
      // FastEmbed pads every input to its maxLength; give it our batch's longest length.
      const reference = yield* Effect.promise(async () =>
        collect((await fastembed(folder, longest)).passageEmbed(TEXTS))
      )
      const ours = yield* loadOnnxEmbedder(
        folder,
        new ModelSpec({ ...spec, prefixes: { query: "query: ", passage: "passage: " } })
      )
      const vectors = yield* ours.embed(TEXTS, "passage")
      expect(vectors).toHaveLength(TEXTS.length)
      vectors.forEach((v, i) => {
        expect(maxAbsDiff(v, reference[i] ?? [])).toBeLessThan(1e-5)
      })
    })
  )

  it.scoped.skipIf(!data)(
    "equals FastEmbed's query vector and its fixed 512-token padding when asked to pad to 512",
    () =>
      Effect.gen(function* () {
        const { folder, dispose } = tinyModelFolder(data ?? "")
        yield* Effect.addFinalizer(() => Effect.sync(dispose))
        const query = TEXTS[1] ?? ""
        const fixed = yield* Effect.promise(() => fastembed(folder, 512))
        const referenceQuery = yield* Effect.promise(() => fixed.queryEmbed(query))
        const referencePassages = yield* Effect.promise(() => collect(fixed.passageEmbed(TEXTS)))
        const withPrefixes = new ModelSpec({ ...spec, prefixes: { query: "query: ", passage: "passage: " } })
        const padded = yield* loadOnnxEmbedder(folder, withPrefixes, { padTo: 512 })
        const [q] = yield* padded.embed([query], "query")
        expect(maxAbsDiff(q ?? [], referenceQuery)).toBeLessThan(1e-5)
        const passages = yield* padded.embed(TEXTS, "passage")
        passages.forEach((v, i) => {
          expect(maxAbsDiff(v, referencePassages[i] ?? [])).toBeLessThan(1e-5)
        })
        // The tiny model ignores the attention mask, so padding to the longest input gives other vectors:
        // this is what makes the comparisons above meaningful.
        const longestOnly = yield* loadOnnxEmbedder(folder, withPrefixes)
        const [q2] = yield* longestOnly.embed([query], "query")
        expect(maxAbsDiff(q2 ?? [], referenceQuery)).toBeGreaterThan(1e-4)
      })
  )

  it.scoped.skipIf(!data)("gives finite unit vectors of the spec's dimension, deterministically, in input order", () =>
    Effect.gen(function* () {
      const { folder, dispose } = tinyModelFolder(data ?? "")
      yield* Effect.addFinalizer(() => Effect.sync(dispose))
      const embedder = yield* loadOnnxEmbedder(folder, spec, { batchSize: 2 })
      const first = yield* embedder.embed(TEXTS, "passage")
      const again = yield* embedder.embed(TEXTS, "passage")
      expect(first.map((v) => v.length)).toEqual(TEXTS.map(() => 8))
      for (const v of first) {
        expect(v.every(Number.isFinite)).toBe(true)
        expect(Math.hypot(...v)).toBeCloseTo(1, 5)
      }
      expect(again.map((v) => [...v])).toEqual(first.map((v) => [...v]))
      expect(yield* embedder.embed([], "query")).toEqual([])
      // Batches are formed by length, not input order; the vectors still come back in input order.
      const oneByOne = yield* loadOnnxEmbedder(folder, spec, { batchSize: 1 })
      const together = yield* oneByOne.embed(TEXTS, "passage")
      for (const [i, text] of TEXTS.entries()) {
        const [alone] = yield* oneByOne.embed([text], "passage")
        expect([...(together[i] ?? [])]).toEqual([...(alone ?? [])])
      }
    })
  )

  it.scoped.skipIf(!data)(
    "splits a call by its token budget into length-sorted runs and keeps the vectors in input order",
    () =>
      Effect.gen(function* () {
        const { folder, dispose } = tinyModelFolder(data ?? "")
        yield* Effect.addFinalizer(() => Effect.sync(dispose))
        // Long and short texts interleaved, so sorting by length reorders them.
        const texts = [TEXTS[2], "hi", `${TEXTS[2]} ${TEXTS[1]}`, TEXTS[0], TEXTS[1], "ok", TEXTS[3]].map(
          (t) => t ?? ""
        )
        const alone = yield* loadOnnxEmbedder(folder, spec)
        const expected: Array<Array<number>> = []
        for (const t of texts) expected.push([...((yield* alone.embed([t], "passage"))[0] ?? [])])
        // A budget of one token leaves every text alone in its run: exactly the vectors of one-text
        // calls (the tiny model sees padding, so any shared run would show), in input order.
        const oneEach = yield* loadOnnxEmbedder(folder, spec, { maxBatchTokens: 1 })
        expect((yield* oneEach.embed(texts, "passage")).map((v) => [...v])).toEqual(expected)
        // A budget that groups some texts: each run is what batchesByLength makes of the token
        // lengths, and each vector is the one its text gets in a call of exactly its run's texts.
        const budget = 48
        const tokenizer = yield* loadTokenizer(folder, spec.max_tokens)
        const lengths = yield* Effect.promise(() => Promise.all(texts.map((t) => tokenizer.encode(t))))
        const runs = batchesByLength(
          lengths.map((e) => e.getLength()),
          32,
          budget
        )
        expect(runs.length).toBeGreaterThan(1)
        expect(runs.some((r) => r.length > 1)).toBe(true)
        const byRun = new Array<Array<number>>(texts.length)
        const unbounded = yield* loadOnnxEmbedder(folder, spec, { maxBatchTokens: Number.POSITIVE_INFINITY })
        for (const run of runs) {
          const vectors = yield* unbounded.embed(
            run.map((i) => texts[i] ?? ""),
            "passage"
          )
          run.forEach((index, j) => {
            byRun[index] = [...(vectors[j] ?? [])]
          })
        }
        const grouped = yield* loadOnnxEmbedder(folder, spec, { maxBatchTokens: budget })
        expect((yield* grouped.embed(texts, "passage")).map((v) => [...v])).toEqual(byRun)
      })
  )

  it.scoped.skipIf(!data)("pads each batch only to its longest input", () =>
    Effect.gen(function* () {
      const { folder, dispose } = tinyModelFolder(data ?? "")
      yield* Effect.addFinalizer(() => Effect.sync(dispose))
      const embedder = yield* loadOnnxEmbedder(folder, spec)
      const long = TEXTS[2] ?? ""
      const [alone] = yield* embedder.embed([long], "passage")
      // A shorter companion does not change the padding length, so the long text's vector is identical.
      const [withShorter] = yield* embedder.embed([long, "hi"], "passage")
      expect([...(withShorter ?? [])]).toEqual([...(alone ?? [])])
      // A longer companion lengthens the padding, which this mask-ignoring model can see.
      const [withLonger] = yield* embedder.embed([long, `${long} ${long}`], "passage")
      expect(maxAbsDiff(withLonger ?? [], alone ?? [])).toBeGreaterThan(1e-4)
    })
  )

  it.scoped.skipIf(!data)("passes its identity sanity check and records its fingerprint", () =>
    Effect.gen(function* () {
      const { folder, dispose } = tinyModelFolder(data ?? "")
      yield* Effect.addFinalizer(() => Effect.sync(dispose))
      const embedder = yield* loadOnnxEmbedder(folder, spec)
      const result = yield* checkModel(embedder, spec)
      expect(result.first).toBe(1)
      expect(embedder.fingerprint).toEqual(fingerprintOf(spec))
      expect(embedder.dims).toBe(8)
    })
  )

  it.scoped.skipIf(!data)("refuses a spec whose dimension differs from the model's output", () =>
    Effect.gen(function* () {
      const { folder, dispose } = tinyModelFolder(data ?? "")
      yield* Effect.addFinalizer(() => Effect.sync(dispose))
      const embedder = yield* loadOnnxEmbedder(folder, new ModelSpec({ ...spec, dims: 384 }))
      const error = yield* Effect.flip(embedder.embed(["x"], "query"))
      expect(error._tag).toBe("EmbedError")
      expect(error.message).toContain("8 dimensions")
    })
  )
})

describe("ONNX embedder with the real bge-small-en (opt-in: BLCTX_MODEL_DIR)", () => {
  it.scoped.runIf(modelDir)("matches FastEmbed at its 512-token padding and ranks the sanity passage first", () =>
    Effect.gen(function* () {
      const folder = modelDir ?? ""
      const embedder = yield* loadOnnxEmbedder(folder, DEFAULT_MODEL_SPEC)
      const result = yield* checkModel(embedder, DEFAULT_MODEL_SPEC)
      expect(result.first).toBe(DEFAULT_MODEL_SPEC.sanity.expected_first)
      // BERT honours the attention mask: FastEmbed's 512-token padding and ours agree.
      const reference = yield* Effect.promise(async () => collect((await fastembed(folder, 512)).passageEmbed(TEXTS)))
      const ours = yield* embedder.embed(TEXTS, "passage")
      ours.forEach((v, i) => {
        expect(v).toHaveLength(384)
        expect(maxAbsDiff(v, reference[i] ?? [])).toBeLessThan(1e-5)
      })
    })
  )
})
