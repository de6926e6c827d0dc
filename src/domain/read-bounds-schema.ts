import { Schema } from "effect"
import { type NumberBound, UNBOUNDED } from "./read-bounds.js"

/** The request field `bound` describes (`read-bounds.ts`): an Int, or any number when fractional. */
export const boundedNumber = (bound: NumberBound): Schema.Schema<number> => {
  const base = bound.fractional === true ? Schema.Number : Schema.Int
  if (bound.max === UNBOUNDED) {
    return bound.exclusiveMin === true
      ? base.pipe(Schema.greaterThan(bound.min))
      : base.pipe(Schema.greaterThanOrEqualTo(bound.min))
  }
  return bound.exclusiveMin === true
    ? base.pipe(Schema.greaterThan(bound.min), Schema.lessThanOrEqualTo(bound.max))
    : base.pipe(Schema.between(bound.min, bound.max))
}

/** The field, optional in a request, taking the bound's fallback when left out. */
export const boundedWithFallback = (bound: NumberBound & { readonly fallback: number }) =>
  Schema.optionalWith(boundedNumber(bound), { default: () => bound.fallback })
