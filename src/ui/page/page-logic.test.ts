import { describe, expect, it } from "vitest"
import { barHeights } from "./bar-chart.js"
import { groupBy } from "./day.js"
import { changesBetween } from "./diff-view.js"
import { shown } from "./el.js"
import { selectorOf } from "./forget-view.js"

describe("the page's pure parts", () => {
  it("shows bidi controls and terminal controls as visible escapes", () => {
    expect(shown("a\u202Eb\u2066c\u2069\u001b[2J")).toBe("a\\u{202e}b\\u{2066}c\\u{2069}\\x1b[2J")
    expect(shown("plain <script>\n\ttext")).toBe("plain <script>\n\ttext")
  })

  it("diffs two revisions as words, on their visible text", () => {
    const changes = changesBetween("ship on friday", "ship on \u202Emonday")
    expect(changes.filter((c) => c.removed).map((c) => c.value)).toEqual(["friday"])
    expect(changes.filter((c) => c.added).map((c) => c.value)).toEqual(["\\u{202e}monday"])
    expect(
      changes
        .filter((c) => !c.added && !c.removed)
        .map((c) => c.value)
        .join("")
    ).toBe("ship on ")
  })

  it("scales bars to the largest value, keeping small ones visible and zeros empty", () => {
    expect(barHeights([0, 1, 50, 100], 100)).toEqual([0, 1, 50, 100])
    expect(barHeights([1, 1000], 100)).toEqual([1, 100])
    expect(barHeights([], 100)).toEqual([])
    expect(barHeights([0, 0], 100)).toEqual([0, 0])
  })

  it("forgets by exactly the one thing the route names", () => {
    expect(selectorOf({ session: "s1" })).toEqual({ session: "s1" })
    expect(selectorOf({ note: "n1", session: "s1" })).toEqual({ note: "n1" })
    expect(selectorOf({ since: "2026-03-01", until: "" })).toEqual({ since: "2026-03-01" })
    expect(selectorOf({})).toBeUndefined()
  })

  it("groups in the order keys first appear", () => {
    expect(groupBy(["b1", "a1", "b2"], (s) => s.slice(0, 1))).toEqual([
      ["b", ["b1", "b2"]],
      ["a", ["a1"]]
    ])
  })
})
