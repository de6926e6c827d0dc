import { Data, Effect } from "effect"
import type { ModelSpec } from "../domain/model-spec.js"
import type { EmbedderShape } from "./embedder.js"
import { cosine } from "./pooling.js"

/** The loaded model produced vectors that cannot be right. */
export class SanityFailure extends Data.TaggedError("SanityFailure")<{
  readonly message: string
}> {}

export interface SanityResult {
  readonly dims: number
  /** Cosine similarity of the query with each passage, in passage order. */
  readonly scores: ReadonlyArray<number>
  readonly first: number
}

/**
 * Offline verification of a loaded model: every vector is finite, non-zero, unit length and
 * of the spec's dimension, and the spec's ranked-retrieval check ranks the expected passage
 * first among its passages.
 */
export const checkModel = Effect.fn("Model.sanityCheck")(function* (embedder: EmbedderShape, spec: ModelSpec) {
  const check = spec.sanity
  const [query] = yield* embedder.embed([check.query], "query")
  const passages = yield* embedder.embed(check.passages, "passage")
  const all = [query, ...passages]
  for (const [i, v] of all.entries()) {
    const what = i === 0 ? "the query vector" : `passage vector ${i - 1}`
    if (v === undefined) return yield* new SanityFailure({ message: `${what} is missing` })
    if (v.length !== spec.dims) {
      return yield* new SanityFailure({ message: `${what} has ${v.length} dimensions; the spec says ${spec.dims}` })
    }
    if (!v.every(Number.isFinite)) return yield* new SanityFailure({ message: `${what} has non-finite values` })
    let norm = 0
    for (const x of v) norm += x * x
    if (norm === 0) return yield* new SanityFailure({ message: `${what} is all zeros` })
    if (Math.abs(Math.sqrt(norm) - 1) > 1e-3) {
      return yield* new SanityFailure({ message: `${what} is not unit length (norm ${Math.sqrt(norm).toFixed(4)})` })
    }
  }
  const q = query as Float32Array
  const scores = passages.map((p) => cosine(q, p))
  const first = scores.reduce((best, s, i) => (s > (scores[best] ?? -Infinity) ? i : best), 0)
  if (first !== check.expected_first) {
    return yield* new SanityFailure({
      message: `ranked-retrieval check failed: passage ${first} ranked first, expected ${check.expected_first} (scores ${scores.map((s) => s.toFixed(3)).join(", ")})`
    })
  }
  return { dims: spec.dims, scores, first } satisfies SanityResult
})
