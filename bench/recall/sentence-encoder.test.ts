import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { loadSentenceEncoder } from "./sentence-encoder.js"

// The recall benchmark's stand-in encoder must know meaning, or its fused figures say nothing.

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0)

describe("the recall benchmark's stand-in sentence encoder", () => {
  it("ranks a paraphrase's answer first though they share no word, with unit vectors", async () => {
    const encoder = await Effect.runPromise(loadSentenceEncoder)
    const passages = [
      "Customers in Germany get the wrong VAT on their invoices.",
      "Roll back with kubectl rollout undo and check the previous replica set.",
      "The customers table is slow with 20k rows. Scrolling stutters."
    ]
    const [query, ...vectors] = await Effect.runPromise(
      encoder.embed(["how do I revert a bad deploy", ...passages], "passage")
    )
    expect(query?.length).toBe(encoder.dims)
    for (const v of vectors) expect(dot(v, v)).toBeCloseTo(1, 4)
    const scores = vectors.map((v) => dot(query ?? v, v))
    expect(scores.indexOf(Math.max(...scores))).toBe(1)
  })
})
