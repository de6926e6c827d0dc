/**
 * Hybrid fusion by convex combination (Bruch, Gai and Ingber, "An Analysis of Fusion Functions
 * for Hybrid Retrieval", 2023): each list's scores are min-max normalised to [0, 1] within the
 * response, and the lists are averaged with equal weights (chosen, not tuned); a chunk a list
 * does not hold scores 0 there. Unlike reciprocal rank fusion it keeps how far apart the scores
 * are: a words-only match far ahead of the rest is not overtaken by a chunk both lists rank
 * middling. Decision 0024 has the measurements.
 */

export interface Scored<Id> {
  readonly id: Id
  /** Higher is better. Only the order and spacing within its own list matter. */
  readonly score: number
}

export interface Fused<Id> {
  readonly id: Id
  /** The fused score in [0, 1]: comparable only within one response, never a probability. */
  readonly score: number
}

/** Each id's score scaled to [0, 1] by the list's lowest and highest; an id listed twice keeps its best. */
const normalised = <Id>(list: ReadonlyArray<Scored<Id>>): ReadonlyMap<Id, number> => {
  const finite = list.filter((item) => Number.isFinite(item.score))
  if (finite.length === 0) return new Map()
  const scores = finite.map((item) => item.score)
  const low = Math.min(...scores)
  const span = Math.max(...scores) - low
  const out = new Map<Id, number>()
  for (const item of finite) {
    // Every score equal (or one item): each is its list's best.
    const value = span === 0 ? 1 : (item.score - low) / span
    out.set(item.id, Math.max(out.get(item.id) ?? 0, value))
  }
  return out
}

/**
 * The lists fused by a weighted mean of their normalised scores, best first (ties in first-seen
 * order). The weights default to equal; given, there is one per list and they sum to 1.
 */
export const convexFusion = <Id>(
  lists: ReadonlyArray<ReadonlyArray<Scored<Id>>>,
  weights: ReadonlyArray<number> = lists.map(() => 1 / lists.length)
): ReadonlyArray<Fused<Id>> => {
  const fused = new Map<Id, number>()
  lists.forEach((list, i) => {
    const weight = weights[i] ?? 0
    for (const [id, value] of normalised(list)) fused.set(id, (fused.get(id) ?? 0) + weight * value)
  })
  return [...fused.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score)
}

/**
 * How many of the words-only side's leading exact matches fusion keeps on top. A chunk holding
 * every code form or content word of the query as written is the strongest evidence a search
 * has: a vector side that is weak, unverified or wrong about it (a flag, a path, a name the
 * model never saw) must not push it down the page.
 */
export const KEPT_EXACT = 3

/**
 * Fusion that never loses an exact hit: the `exact` ids (the words-only side's leading exact
 * matches, best first, at most `KEPT_EXACT`) come first in their own order, then everything
 * else as `convexFusion` ranks it.
 */
export const fuseKeepingExact = <Id>(
  lists: ReadonlyArray<ReadonlyArray<Scored<Id>>>,
  exact: ReadonlyArray<Id>
): ReadonlyArray<Fused<Id>> => {
  const fused = convexFusion(lists)
  const kept = new Set(exact.slice(0, KEPT_EXACT))
  const first = [...kept].flatMap((id) => fused.filter((f) => f.id === id))
  return [...first, ...fused.filter((f) => !kept.has(f.id))]
}
