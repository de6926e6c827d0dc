/**
 * mulberry32: a small, fast pseudo-random generator whose numbers in [0, 1) follow from the seed
 * alone, so benchmarks measure the same data and tests (and their failures) are reproducible.
 * One definition for the benchmarks and the tests; production code never draws from it.
 */
export const seededRandom = (seed: number): (() => number) => {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
