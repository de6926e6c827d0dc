import { describe, expect, it } from "@effect/vitest"
import { applyTextBudget } from "./text-budget.js"

const cut = (_item: { text: string; cut: boolean }, text: string) => ({ text, cut: true })
const items = (...lengths: Array<number>) =>
  lengths.map((n, i) => ({ text: String.fromCharCode(97 + i).repeat(n), cut: false }))

describe("applyTextBudget", () => {
  it("returns everything, untruncated, when texts fit exactly at 24,000 characters", () => {
    const result = applyTextBudget(items(12_000, 12_000), (i) => i.text, cut)
    expect(result.truncated).toBe(false)
    expect(result.returnedChars).toBe(24_000)
    expect(result.items).toHaveLength(2)
  })

  it("cuts the item that crosses the budget, flags it, and leaves the rest for the next page", () => {
    const result = applyTextBudget(items(20_000, 5_000, 10), (i) => i.text, cut)
    expect(result.truncated).toBe(true)
    expect(result.returnedChars).toBe(24_000)
    expect(result.items.map((i) => i.text.length)).toEqual([20_000, 4_000])
    expect(result.items[1]?.cut).toBe(true)
    expect(result.taken).toBe(2)
  })

  it("one character over is truncated", () => {
    const result = applyTextBudget(items(24_001), (i) => i.text, cut)
    expect(result.truncated).toBe(true)
    expect(result.items[0]?.text.length).toBe(24_000)
  })

  it("an item that starts exactly at the budget is left out, and that is flagged", () => {
    const result = applyTextBudget(items(24_000, 1), (i) => i.text, cut)
    expect(result.truncated).toBe(true)
    expect(result.items).toHaveLength(1)
    expect(result.taken).toBe(1)
  })
})
