import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import wabt from "wabt"
import { seededRandom } from "../../bench/seeded-random.js"
import { CompactMatrix, quantize } from "./compact-matrix.js"
import { INT8_DOT_WASM } from "./int8-dot-wasm.js"

const randomVector = (next: () => number, dims: number) => Float32Array.from({ length: dims }, () => next() * 2 - 1)
const approx = (a: Float32Array, b: Float32Array) => {
  const qa = quantize(a)
  const qb = quantize(b)
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += (qa.codes[i] ?? 0) * (qb.codes[i] ?? 0)
  return dot * qa.scale * qb.scale
}

describe("quantize", () => {
  it("codes the unit vector: the largest magnitude is ±127 and every value within half a step", () => {
    const v = Float32Array.from([0.5, -0.25, 0.001, -0.5])
    const { codes, scale } = quantize(v)
    expect([...codes]).toEqual([127, -63, 0, -127])
    v.forEach((x, i) => {
      expect(Math.abs((codes[i] ?? 0) * scale - x / 0.75)).toBeLessThanOrEqual(scale / 2 + 1e-6)
    })
    const longer = quantize(v.map((x) => x * 40))
    expect(longer.codes).toEqual(codes)
    expect(longer.scale).toBeCloseTo(scale, 9)
  })

  it("gives a zero vector (or one that is not finite) scale 0", () => {
    expect(quantize(new Float32Array(4)).scale).toBe(0)
    expect(quantize(Float32Array.from([1, Number.NaN, Number.POSITIVE_INFINITY])).scale).toBe(0)
  })
})

describe("CompactMatrix", () => {
  it("ranks rows by the same approximate score a plain loop computes, at 384 and 8 dimensions", () => {
    for (const dims of [384, 8]) {
      const next = seededRandom(dims)
      const matrix = new CompactMatrix(dims)
      const vectors = Array.from({ length: 3000 }, () => randomVector(next, dims))
      vectors.forEach((v, i) => {
        matrix.set(i + 100, quantize(v))
      })
      expect(matrix.size).toBe(3000)
      const query = randomVector(next, dims)
      const expected = vectors
        .map((v, i) => ({ id: i + 100, score: approx(query, v) }))
        .sort((a, b) => b.score - a.score || a.id - b.id)
        .slice(0, 25)
        .map((e) => e.id)
      expect(matrix.candidates(query, 25)).toEqual(expected)
    }
  })

  it("replaces a row in place, returns fewer candidates than asked when smaller, never zero vectors", () => {
    const matrix = new CompactMatrix(4)
    matrix.set(1, quantize(Float32Array.from([1, 0, 0, 0])))
    matrix.set(2, quantize(Float32Array.from([0, 1, 0, 0])))
    matrix.set(3, quantize(new Float32Array(4)))
    expect(matrix.candidates(Float32Array.from([1, 0, 0, 0]), 10)).toEqual([1, 2])
    matrix.set(1, quantize(Float32Array.from([0, 0, 0, 1])))
    expect(matrix.size).toBe(3)
    expect(matrix.candidates(Float32Array.from([0, 0, 0, 1]), 1)).toEqual([1])
    expect(matrix.has(3)).toBe(true)
    matrix.delete(2)
    expect(matrix.candidates(Float32Array.from([0, 1, 0, 0]), 5)).toEqual([1])
    matrix.set(7, quantize(Float32Array.from([0, 1, 0, 0])))
    expect(matrix.size).toBe(3)
    expect(matrix.candidates(Float32Array.from([0, 1, 0, 0]), 1)).toEqual([7])
    expect(new CompactMatrix(4).candidates(Float32Array.from([1, 0, 0, 0]), 5)).toEqual([])
  })

  it("finds the exact nearest neighbour among its candidates for near-duplicates", () => {
    const next = seededRandom(11)
    const matrix = new CompactMatrix(384)
    const base = randomVector(next, 384)
    // 200 vectors that differ from `base` by growing noise (so growing norms too): the int8 pass
    // must rank by direction, not length, and keep the 10 closest among the first 42 candidates.
    const vectors = Array.from({ length: 200 }, (_, i) => base.map((x) => x + (next() - 0.5) * 0.02 * (i + 1)))
    vectors.forEach((v, i) => {
      matrix.set(i, quantize(v))
    })
    const candidates = new Set(matrix.candidates(base, 42))
    for (let i = 0; i < 10; i++) expect(candidates.has(i)).toBe(true)
  })
})

describe("the int8 dot kernel", () => {
  it("is the compiled form of int8-dot.wat", async () => {
    const source = readFileSync(new URL("./int8-dot.wat", import.meta.url), "utf8")
    const module = (await wabt()).parseWat("int8-dot.wat", source, { simd: true })
    expect(Buffer.from(module.toBinary({}).buffer).toString("base64")).toBe(INT8_DOT_WASM)
  })
})
