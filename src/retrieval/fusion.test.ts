import { describe, expect, it } from "@effect/vitest"
import { fuseKeepingExact, KEPT_EXACT, RRF_K, reciprocalRankFusion } from "./fusion.js"

describe("reciprocalRankFusion", () => {
  it("rewards items both lists agree on", () => {
    const lexical = [
      { id: "a", score: 9 },
      { id: "b", score: 5 },
      { id: "c", score: 1 }
    ]
    const vector = [
      { id: "d", score: 0.9 },
      { id: "b", score: 0.8 },
      { id: "c", score: 0.1 }
    ]
    const fused = reciprocalRankFusion([lexical, vector])
    expect(fused.map((f) => f.id)).toEqual(["b", "c", "a", "d"])
    expect(fused[0]?.score).toBeCloseTo(2 / (RRF_K + 2))
    expect(fused.find((f) => f.id === "a")?.ranks).toEqual([1, null])
  })

  it("ignores raw scores: only ranks matter", () => {
    const a = reciprocalRankFusion([
      [
        { id: 1, score: 1000 },
        { id: 2, score: 999 }
      ]
    ])
    const b = reciprocalRankFusion([
      [
        { id: 1, score: 0.2 },
        { id: 2, score: 0.1 }
      ]
    ])
    expect(a).toEqual(b)
  })

  it("counts a duplicated id once per list", () => {
    const fused = reciprocalRankFusion([
      [
        { id: "x", score: 1 },
        { id: "x", score: 1 }
      ]
    ])
    expect(fused).toEqual([{ id: "x", score: 1 / (RRF_K + 1), ranks: [1] }])
  })
})

describe("fuseKeepingExact", () => {
  const lexical = ["exact", "b", "c", "d"].map((id, i) => ({ id, score: -10 + i }))
  // The vector side agrees on everything but the exact match, which it ranks last.
  const vector = ["b", "c", "d", "e", "f", "exact"].map((id, i) => ({ id, score: 1 - i / 10 }))

  it("keeps the words-only side's exact match first whatever the vector side says", () => {
    expect(reciprocalRankFusion([lexical, vector])[0]?.id).not.toBe("exact")
    const fused = fuseKeepingExact([lexical, vector], ["exact"])
    expect(fused.map((f) => f.id)).toEqual([
      "exact",
      ...reciprocalRankFusion([lexical, vector])
        .map((f) => f.id)
        .filter((id) => id !== "exact")
    ])
    expect(fused[0]?.ranks).toEqual([1, 6])
  })

  it("is plain reciprocal rank fusion without exact matches, and keeps at most a few", () => {
    expect(fuseKeepingExact([lexical, vector], [])).toEqual(reciprocalRankFusion([lexical, vector]))
    const kept = fuseKeepingExact([lexical, vector], ["d", "c", "b", "exact"])
    expect(kept.slice(0, KEPT_EXACT).map((f) => f.id)).toEqual(["d", "c", "b"])
  })
})
