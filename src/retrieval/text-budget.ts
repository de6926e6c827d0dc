import { RESPONSE_TEXT_BUDGET } from "./contract.js"

export interface Budgeted<A> {
  readonly items: ReadonlyArray<A>
  /** True when a text was cut or items were left out. */
  readonly truncated: boolean
  readonly returnedChars: number
  /** How many of the input items are in `items` (the last one possibly cut). */
  readonly taken: number
}

/**
 * Keeps items in order until their texts reach `budget` characters: the item that crosses the
 * budget is cut to fit (and marked), the rest are left for the next page.
 */
export const applyTextBudget = <A>(
  items: ReadonlyArray<A>,
  textOf: (item: A) => string,
  cut: (item: A, text: string) => A,
  budget: number = RESPONSE_TEXT_BUDGET
): Budgeted<A> => {
  const out: Array<A> = []
  let used = 0
  for (const item of items) {
    const text = textOf(item)
    const room = budget - used
    if (text.length <= room) {
      out.push(item)
      used += text.length
      continue
    }
    if (room > 0) {
      out.push(cut(item, text.slice(0, room)))
      used += room
    }
    return { items: out, truncated: true, returnedChars: used, taken: out.length }
  }
  return { items: out, truncated: false, returnedChars: used, taken: out.length }
}
