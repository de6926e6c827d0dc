import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { Effect } from "effect"
import * as ort from "onnxruntime-node"
import { describe, expect, it } from "vitest"
import { loadOnnxEmbedder } from "../layers/onnx-model-runtime.js"
import { ModelSpec } from "../src/domain/model-spec.js"
import { checkModel } from "../src/embedding/sanity.js"
import { TOKENIZER_FILES, testModelData, tinyModelSpec } from "../testing/model-test-folder.js"
import { STANDIN_DIMS, STANDIN_VOCAB, standinModelBytes, standinTable } from "./standin-model.js"

// The bench's stand-in encoder (bench/standin-model.ts), beside it: the unit project runs the
// bench's tests too.

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex")

describe("the bench's stand-in encoder", () => {
  it("is deterministic for a seed and differs between seeds", () => {
    const a = standinModelBytes(3, 50, 8)
    expect(sha256(standinModelBytes(3, 50, 8))).toBe(sha256(a))
    expect(sha256(standinModelBytes(4, 50, 8))).not.toBe(sha256(a))
  })

  it("loads in ONNX Runtime and puts the masked mean of the table rows at every position", async () => {
    const bytes = standinModelBytes()
    const table = standinTable()
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ["cpu"] })
    try {
      expect([...session.inputNames].sort()).toEqual(["attention_mask", "input_ids", "token_type_ids"])
      expect(session.outputNames).toEqual(["last_hidden_state"])
      // Two rows, right-padded: [CLS] a b c [SEP] and [CLS] d [SEP] pad pad.
      const ids = [101, 2000, 7592, STANDIN_VOCAB - 1, 102, 101, 42, 102, 0, 0]
      const mask = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]
      const dims = [2, 5]
      const big = (xs: ReadonlyArray<number>) => BigInt64Array.from(xs.map((x) => BigInt(x)))
      const out = await session.run({
        input_ids: new ort.Tensor("int64", big(ids), dims),
        attention_mask: new ort.Tensor("int64", big(mask), dims),
        token_type_ids: new ort.Tensor("int64", new BigInt64Array(10), dims)
      })
      const hidden = out.last_hidden_state
      expect(hidden?.dims).toEqual([2, 5, STANDIN_DIMS])
      const data = hidden?.data as Float32Array
      for (let r = 0; r < 2; r++) {
        const expected = new Float64Array(STANDIN_DIMS)
        let n = 0
        for (let t = 0; t < 5; t++) {
          if (mask[r * 5 + t] === 0) continue
          n++
          const row = ids[r * 5 + t] ?? 0
          for (let d = 0; d < STANDIN_DIMS; d++) expected[d] = (expected[d] ?? 0) + (table[row * STANDIN_DIMS + d] ?? 0)
        }
        for (let t = 0; t < 5; t++) {
          const base = (r * 5 + t) * STANDIN_DIMS
          for (let d = 0; d < STANDIN_DIMS; d++) {
            expect(Math.abs((data[base + d] ?? Number.NaN) - (expected[d] ?? 0) / n)).toBeLessThan(1e-5)
          }
        }
      }
    } finally {
      await session.release()
    }
  })

  it.skipIf(!testModelData())(
    "passes blctx's loader and identity sanity check with bge-small-en's tokenizer (BLCTX_TEST_MODEL_DATA)",
    async () => {
      const folder = mkdtempSync(NodePath.join(tmpdir(), "blctx-standin-"))
      try {
        writeFileSync(NodePath.join(folder, "model_optimized.onnx"), standinModelBytes())
        for (const name of TOKENIZER_FILES) {
          symlinkSync(NodePath.join(testModelData() ?? "", "fast-bge-small-en", name), NodePath.join(folder, name))
        }
        const spec = new ModelSpec({
          ...tinyModelSpec([{ name: "model_optimized.onnx", size: 1, sha256: "0".repeat(64) }]),
          dims: STANDIN_DIMS
        })
        const result = await Effect.runPromise(
          Effect.scoped(Effect.flatMap(loadOnnxEmbedder(folder, spec), (embedder) => checkModel(embedder, spec)))
        )
        expect(result.first).toBe(1)
        expect(result.scores[1]).toBeCloseTo(1, 5)
      } finally {
        rmSync(folder, { recursive: true, force: true })
      }
    }
  )
})
