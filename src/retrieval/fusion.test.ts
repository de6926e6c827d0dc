import { describe, expect, it } from "@effect/vitest"
import { convexFusion, fuseKeepingExact, KEPT_EXACT } from "./fusion.js"

describe("convexFusion", () => {
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
    const fused = convexFusion([lexical, vector])
    // b: (0.5 + 0.875) / 2; a: 1 / 2; d: 1 / 2; c: the lowest of both lists.
    expect(fused.map((f) => f.id)).toEqual(["b", "a", "d", "c"])
    expect(fused[0]?.score).toBeCloseTo((4 / 8 + 0.7 / 0.8) / 2)
    expect(fused.at(-1)?.score).toBe(0)
  })

  it("keeps a words-only match far ahead of the rest above a chunk the vector side ranks a little higher", () => {
    // The words-only side is sure of "answer" and lukewarm about the rest; the vector side puts
    // it 4th, a little below the others. Rank fusion would put "m1" first (2nd and 1st against
    // 1st and 4th); the scores say the words-only side's lead is the larger one.
    const lexical = [
      { id: "answer", score: 30 },
      { id: "m1", score: 8 },
      { id: "m2", score: 7 },
      { id: "m3", score: 6 }
    ]
    const vector = [
      { id: "m1", score: 0.6 },
      { id: "m2", score: 0.59 },
      { id: "other", score: 0.58 },
      { id: "answer", score: 0.55 },
      { id: "m3", score: 0.5 }
    ]
    expect(convexFusion([lexical, vector])[0]?.id).toBe("answer")
  })

  it("is the same for lists whose scores differ only in scale", () => {
    const a = convexFusion([
      [
        { id: 1, score: 1000 },
        { id: 2, score: 500 },
        { id: 3, score: 0 }
      ]
    ])
    const b = convexFusion([
      [
        { id: 1, score: 0.2 },
        { id: 2, score: 0.1 },
        { id: 3, score: 0 }
      ]
    ])
    expect(a).toEqual(b)
  })

  it("counts a duplicated id once per list, at its best score, and ignores scores that are not numbers", () => {
    const fused = convexFusion([
      [
        { id: "x", score: 1 },
        { id: "y", score: Number.NaN },
        { id: "x", score: 3 },
        { id: "z", score: 2 }
      ]
    ])
    expect(fused).toEqual([
      { id: "x", score: 1 },
      { id: "z", score: 0.5 }
    ])
  })

  it("scores a list of equal scores (or of one item) as each its list's best", () => {
    expect(convexFusion([[{ id: "only", score: -4 }], []])).toEqual([{ id: "only", score: 0.5 }])
    expect(convexFusion([])).toEqual([])
  })
})

describe("convexFusion with weights", () => {
  it("weighs each list by its weight: a heavier first list's best beats what two lighter lists agree on", () => {
    const question = [
      { id: "asked", score: 10 },
      { id: "guessed", score: 0 }
    ]
    const guess = [
      { id: "guessed", score: 5 },
      { id: "asked", score: 2 },
      { id: "other", score: 1 }
    ]
    // Equal weights: "asked" 1/3 + 2/3 x 0.25 = 0.5, "guessed" 2/3.
    expect(convexFusion([question, guess, guess]).map((f) => f.id)).toEqual(["guessed", "asked", "other"])
    // The question at half: "asked" 0.5 + 0.5 x 0.25 = 0.625, "guessed" 0.5.
    const weighted = convexFusion([question, guess, guess], [0.5, 0.25, 0.25])
    expect(weighted.map((f) => [f.id, Number(f.score.toFixed(3))])).toEqual([
      ["asked", 0.625],
      ["guessed", 0.5],
      ["other", 0]
    ])
  })
})

describe("fuseKeepingExact", () => {
  const lexical = ["exact", "b", "c", "d"].map((id, i) => ({ id, score: 10 - i }))
  // The vector side agrees on everything but the exact match, which it ranks last and far below.
  const vector = ["b", "c", "d", "e", "f", "exact"].map((id, i) => ({ id, score: i === 5 ? 0 : 0.9 - i / 100 }))

  it("keeps the words-only side's exact match first whatever the vector side says", () => {
    expect(convexFusion([lexical, vector])[0]?.id).not.toBe("exact")
    const fused = fuseKeepingExact([lexical, vector], ["exact"])
    expect(fused.map((f) => f.id)).toEqual([
      "exact",
      ...convexFusion([lexical, vector])
        .map((f) => f.id)
        .filter((id) => id !== "exact")
    ])
  })

  it("is plain fusion without exact matches, and keeps at most a few", () => {
    expect(fuseKeepingExact([lexical, vector], [])).toEqual(convexFusion([lexical, vector]))
    const kept = fuseKeepingExact([lexical, vector], ["d", "c", "b", "exact"])
    expect(kept.slice(0, KEPT_EXACT).map((f) => f.id)).toEqual(["d", "c", "b"])
  })
})
