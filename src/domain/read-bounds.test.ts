import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { ListNotesRequest } from "../notes/notes-contract.js"
import { ContextRequest } from "../retrieval/context.js"
import { SearchRequest } from "../retrieval/contract.js"
import { RecentRequest } from "../retrieval/recent.js"
import {
  CONTEXT_BOUNDS,
  describeBound,
  LIST_NOTES_BOUNDS,
  type NumberBound,
  RECENT_BOUNDS,
  SEARCH_BOUNDS,
  withinBound
} from "./read-bounds.js"

/** Values at and around every edge of a bound, and some that are not integers. */
const probes = (bound: NumberBound) => [
  bound.min - 1,
  bound.min,
  bound.min + 0.5,
  bound.min + 1,
  bound.max - 1,
  bound.max,
  bound.max + 1,
  Number.NaN
]

/** Whether the request schema accepts `value` for `field` (the other fields as a minimal request). */
const accepts = (schema: Schema.Schema.AnyNoContext, base: object, field: string, value: number) =>
  Either.isRight(Schema.decodeUnknownEither(schema)({ ...base, [field]: value }))

describe("read bounds, declared once", () => {
  const cases: ReadonlyArray<readonly [string, Schema.Schema.AnyNoContext, object, Record<string, NumberBound>]> = [
    ["search", SearchRequest, { query: "q" }, SEARCH_BOUNDS],
    ["recent", RecentRequest, {}, RECENT_BOUNDS],
    ["context", ContextRequest, { context_id: "c1" }, CONTEXT_BOUNDS],
    ["notes list", ListNotesRequest, {}, LIST_NOTES_BOUNDS]
  ]
  it.each(cases)("the %s request schema accepts exactly what its bounds do", (_, schema, base, bounds) => {
    for (const [field, bound] of Object.entries(bounds)) {
      for (const value of probes(bound)) {
        expect(accepts(schema, base, field, value), `${field} = ${value}`).toBe(withinBound(value, bound))
      }
    }
  })

  it("says a bound in words", () => {
    expect(describeBound(SEARCH_BOUNDS.limit)).toBe("between 1 and 100")
    expect(describeBound(SEARCH_BOUNDS.offset)).toBe("between 0 and 10,000")
    expect(describeBound(RECENT_BOUNDS.offset)).toBe("at least 0")
    expect(describeBound(RECENT_BOUNDS.days)).toBe("greater than 0 and at most 36,500")
  })
})
