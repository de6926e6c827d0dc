/**
 * The numeric bounds of the history reads (search, recent, context, notes list), declared once.
 * The request schemas (`contract.ts`, `recent.ts`, `context.ts`, `notes-contract.ts`) derive their
 * checks from these (`read-bounds-schema.ts`), the CLI derives its options and their usage errors
 * (`src/cli/request-options.ts`), and the CLI's effect-free search fast path
 * (`src/cli/fast-search.ts`) its pre-check, so changing a bound is one edit here. Plain constants:
 * this module imports nothing, so the fast path may load it.
 */

/**
 * A number a request field accepts: from `min` (or above it, when `exclusiveMin`) to `max`, both
 * inclusive, an integer unless `fractional`; `fallback` is used when the field is left out.
 */
export interface NumberBound {
  readonly min: number
  readonly max: number
  readonly exclusiveMin?: boolean
  readonly fractional?: boolean
  readonly fallback?: number
}

/** No upper bound a person could reach: the field is only bounded below. */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER

export const SEARCH_BOUNDS = {
  limit: { min: 1, max: 100, fallback: 10 },
  offset: { min: 0, max: 10_000, fallback: 0 }
} as const satisfies Record<string, NumberBound>

export const RECENT_BOUNDS = {
  /** A day count: any positive number up to a century (fractions such as 0.5 work). */
  days: { min: 0, exclusiveMin: true, max: 36_500, fractional: true },
  limit: { min: 1, max: 200, fallback: 20 },
  offset: { min: 0, max: UNBOUNDED, fallback: 0 }
} as const satisfies Record<string, NumberBound>

export const CONTEXT_BOUNDS = {
  /** No fallback: without it, the page starts at the first message of the result's turn. */
  offset: { min: 0, max: UNBOUNDED },
  limit: { min: 1, max: 200, fallback: 20 },
  char_offset: { min: 0, max: UNBOUNDED, fallback: 0 }
} as const satisfies Record<string, NumberBound>

export const LIST_NOTES_BOUNDS = {
  limit: { min: 1, max: 200, fallback: 20 },
  offset: { min: 0, max: 1_000_000, fallback: 0 }
} as const satisfies Record<string, NumberBound>

/** Whether `n` is within `bound` (and an integer, unless the bound is fractional). */
export const withinBound = (n: number, bound: NumberBound): boolean =>
  Number.isFinite(n) &&
  (bound.fractional === true || Number.isInteger(n)) &&
  (bound.exclusiveMin === true ? n > bound.min : n >= bound.min) &&
  n <= bound.max

const count = (n: number) => n.toLocaleString("en-US")

/** The range as a description says it: `1 to 100`, or `0 or more`. */
export const rangeWords = (bound: NumberBound): string =>
  bound.max === UNBOUNDED ? `${bound.min} or more` : `${bound.min} to ${bound.max}`

/** The bound in words: `between 1 and 100`, `at least 0`, `greater than 0 and at most 36,500`. */
export const describeBound = (bound: NumberBound): string => {
  const low = bound.exclusiveMin === true ? `greater than ${count(bound.min)}` : `at least ${count(bound.min)}`
  if (bound.max === UNBOUNDED) return low
  if (bound.exclusiveMin === true) return `${low} and at most ${count(bound.max)}`
  return `between ${count(bound.min)} and ${count(bound.max)}`
}
