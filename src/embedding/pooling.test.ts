import { describe, expect, it } from "@effect/vitest"
import { batchesByLength, clsPool, cosine, l2Normalize, padBatch } from "./pooling.js"

describe("padBatch", () => {
  it("pads to the longest input with the pad id, attention 0 and type 0", () => {
    const batch = padBatch(
      [
        { ids: [101, 7, 102], typeIds: [0, 0, 0] },
        { ids: [101, 102], typeIds: [0, 1] }
      ],
      0
    )
    expect(batch.length).toBe(3)
    expect([...batch.inputIds]).toEqual([101n, 7n, 102n, 101n, 102n, 0n])
    expect([...batch.attentionMask]).toEqual([1n, 1n, 1n, 1n, 1n, 0n])
    expect([...batch.typeIds]).toEqual([0n, 0n, 0n, 0n, 1n, 0n])
  })

  it("pads further only when asked to (FastEmbed's fixed length, for the conformance test)", () => {
    expect(padBatch([{ ids: [1, 2], typeIds: [0, 0] }], 9, 4).inputIds).toEqual(BigInt64Array.from([1n, 2n, 9n, 9n]))
    expect(padBatch([{ ids: [1, 2, 3], typeIds: [0, 0, 0] }], 0, 2).length).toBe(3)
  })
})

describe("pooling", () => {
  it("takes the first token of each row and normalises it to unit length", () => {
    // two rows, two tokens, hidden size 2
    const data = Float32Array.from([3, 4, 9, 9, 0, -2, 9, 9])
    expect(clsPool(data, 2, 2, 2).map((v) => [...v])).toEqual([
      [0.6000000238418579, 0.800000011920929],
      [0, -1]
    ])
  })

  it("leaves a zero vector zero instead of dividing by zero", () => {
    expect([...l2Normalize(new Float32Array(3))]).toEqual([0, 0, 0])
  })

  it("computes cosine similarity independent of length", () => {
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([5, 0]))).toBeCloseTo(1, 10)
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([0, 2]))).toBe(0)
  })
})

describe("batchesByLength", () => {
  it("groups inputs of similar length, shortest first, keeping ties in input order", () => {
    expect(batchesByLength([5, 2, 9, 2, 7], 2)).toEqual([[1, 3], [0, 4], [2]])
    expect(batchesByLength([], 4)).toEqual([])
  })

  it("caps a batch's padded tokens (rows × longest), so long inputs go a few at a time", () => {
    // Budget 10: [1,1,2,2,2] fit (5 × 2), then 5s two at a time, and a 12 alone (over budget on its own).
    const lengths = [5, 1, 2, 12, 2, 5, 1, 5, 2]
    const batches = batchesByLength(lengths, 32, 10)
    expect(batches).toEqual([[1, 6, 2, 4, 8], [0, 5], [7], [3]])
    for (const b of batches) {
      const longest = Math.max(...b.map((i) => lengths[i] ?? 0))
      expect(b.length === 1 || b.length * longest <= 10).toBe(true)
    }
    // Every input once, whatever the budget; the row limit still applies.
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i))
    expect(batchesByLength([1, 1, 1], 2, 100)).toEqual([[0, 1], [2]])
  })
})
