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
