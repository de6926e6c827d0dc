/**
 * Property-test runs: a fixed seed, so CI runs the same inputs every time and a failure names a
 * reproducible case; `BLCTX_FUZZ_RUNS` runs longer (and `BLCTX_FUZZ_SEED` explores other inputs).
 */
export const fuzzParameters = (defaultRuns: number) => ({
  numRuns: Number(process.env.BLCTX_FUZZ_RUNS ?? "") || defaultRuns,
  seed: Number(process.env.BLCTX_FUZZ_SEED ?? "") || 20_261_201
})
