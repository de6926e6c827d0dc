import { Option, Schema, SchemaAST } from "effect"
import { described } from "../domain/field-description.js"
import { type NumberBound, UNBOUNDED } from "./read-bounds.js"

/**
 * The bound a request field was built from, kept on its schema so that what derives from the
 * schema (the CLI's options, `src/cli/request-options.ts`) checks the same range and says it in
 * the same words as the decoding does.
 */
export const NumberBoundId: unique symbol = Symbol.for("blctx/NumberBound")

/**
 * The request field `bound` describes (`read-bounds.ts`): an Int, or any number when fractional.
 * `description` is the field's one description: MCP's input schema and the CLI's help both show it.
 */
export const boundedNumber = (bound: NumberBound, description?: string): Schema.Schema<number> => {
  const base = bound.fractional === true ? Schema.Number : Schema.Int
  const checked =
    bound.max === UNBOUNDED
      ? bound.exclusiveMin === true
        ? base.pipe(Schema.greaterThan(bound.min))
        : base.pipe(Schema.greaterThanOrEqualTo(bound.min))
      : bound.exclusiveMin === true
        ? base.pipe(Schema.greaterThan(bound.min), Schema.lessThanOrEqualTo(bound.max))
        : base.pipe(Schema.between(bound.min, bound.max))
  const annotated = checked.annotations({ [NumberBoundId]: bound })
  return description === undefined ? annotated : described(annotated, description)
}

/** The field, optional in a request, taking the bound's fallback when left out. */
export const boundedWithFallback = (bound: NumberBound & { readonly fallback: number }, description?: string) =>
  Schema.optionalWith(boundedNumber(bound, description), { default: () => bound.fallback })

/** The bound a field's schema was built with (`boundedNumber`), if it was. */
export const boundOf = (ast: SchemaAST.AST): NumberBound | undefined =>
  Option.getOrUndefined(SchemaAST.getAnnotation<NumberBound>(ast, NumberBoundId))
