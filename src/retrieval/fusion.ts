/**
 * Reciprocal rank fusion (Cormack et al., 2009): each list contributes 1 / (k + rank). It needs
 * no score calibration between BM25 and cosine similarity, which live on unrelated scales, and
 * k = 60 keeps one list's top hit from drowning the other's.
 */
export const RRF_K = 60

export interface Ranked<Id> {
  readonly id: Id
  readonly score: number
}

export interface Fused<Id> {
  readonly id: Id
  /** The fused score: comparable only within one response, never a probability or percentage. */
  readonly score: number
  /** 1-based ranks in each input list, or null when the list did not contain the item. */
  readonly ranks: ReadonlyArray<number | null>
}

export const reciprocalRankFusion = <Id>(
  lists: ReadonlyArray<ReadonlyArray<Ranked<Id>>>,
  k: number = RRF_K
): ReadonlyArray<Fused<Id>> => {
  const fused = new Map<Id, { score: number; ranks: Array<number | null> }>()
  lists.forEach((list, listIndex) => {
    list.forEach((item, position) => {
      const entry = fused.get(item.id) ?? { score: 0, ranks: lists.map(() => null) }
      // An id listed twice in one list counts once, at its best rank.
      if (entry.ranks[listIndex] !== null) return
      entry.ranks[listIndex] = position + 1
      entry.score += 1 / (k + position + 1)
      fused.set(item.id, entry)
    })
  })
  return [...fused.entries()]
    .map(([id, e]) => ({ id, score: e.score, ranks: e.ranks }))
    .sort((a, b) => b.score - a.score)
}

/**
 * How many of the words-only side's leading exact matches fusion keeps on top. A chunk holding
 * every code form or content word of the query as written is the strongest evidence a search
 * has: a vector side that is weak, unverified or wrong about it (a flag, a path, a name the
 * model never saw) must not push it down the page.
 */
export const KEPT_EXACT = 3

/**
 * Reciprocal rank fusion that never loses an exact hit: the `exact` ids (the words-only side's
 * leading exact matches, best first, at most `KEPT_EXACT`) come first in their own order, then
 * everything else as `reciprocalRankFusion` ranks it.
 */
export const fuseKeepingExact = <Id>(
  lists: ReadonlyArray<ReadonlyArray<Ranked<Id>>>,
  exact: ReadonlyArray<Id>,
  k: number = RRF_K
): ReadonlyArray<Fused<Id>> => {
  const fused = reciprocalRankFusion(lists, k)
  const kept = new Set(exact.slice(0, KEPT_EXACT))
  const first = [...kept].flatMap((id) => fused.filter((f) => f.id === id))
  return [...first, ...fused.filter((f) => !kept.has(f.id))]
}
