/**
 * The long proof loops (kill -9 trials, frozen rounds, simultaneous starts) run in two tiers: a
 * quick one in `npm test` and CI, a deterministic subset that still covers each fault kind and
 * kill point class once, and the full one under `npm run proof` (BLCTX_PROOF=full), which runs
 * every trial the loops were written with.
 */
export const FULL_PROOF = process.env.BLCTX_PROOF === "full"

/**
 * How many rounds a proof loop runs: a positive number in its own variable (for example
 * BLCTX_FAULT_TRIALS) wins, else the tier's count.
 */
export const proofRounds = (tiers: { readonly quick: number; readonly full: number }, override?: string): number => {
  const own = Number(override ?? "")
  if (Number.isInteger(own) && own > 0) return own
  return FULL_PROOF ? tiers.full : tiers.quick
}
