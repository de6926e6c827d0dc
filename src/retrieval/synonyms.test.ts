import { describe, expect, it } from "vitest"
import { baseForms, lazySynonymTable, MAX_SYNONYMS, synonymsOf, synonymTable } from "./synonyms.js"

const TABLE = synonymTable(
  ["bill measure account invoice", "client customer", "night nighttime dark", "theme subject topic", ""].join("\n")
)

describe("the synonym table", () => {
  it("finds a lemma's synonyms by binary search, and nothing for a word it lacks", () => {
    expect(TABLE.of("bill")).toEqual(["measure", "account", "invoice"])
    expect(TABLE.of("client")).toEqual(["customer"])
    expect(TABLE.of("theme")).toEqual(["subject", "topic"])
    expect(TABLE.of("zebra")).toEqual([])
    expect(TABLE.of("")).toEqual([])
  })

  it("looks an inflected word up by its base form", () => {
    expect(baseForms("bills")).toContain("bill")
    expect(baseForms("queries")).toContain("query")
    expect(baseForms("boxes")).toContain("box")
    expect(baseForms("rendered")).toEqual(expect.arrayContaining(["render"]))
    expect(baseForms("caching")).toEqual(expect.arrayContaining(["cach", "cache"]))
    expect(TABLE.of("bills")).toEqual(["measure", "account", "invoice"])
    expect(TABLE.of("clients")).toEqual(["customer"])
  })

  it("adds each synonym once, never one of the question's own words, never a skipped one", () => {
    expect(synonymsOf(TABLE, ["printable", "bills", "client"], () => false)).toEqual([
      "measure",
      "account",
      "invoice",
      "customer"
    ])
    // "customer" is already asked for (as "customers"); "dark" is rejected by the caller.
    expect(synonymsOf(TABLE, ["client", "customers", "night"], (w) => w === "dark")).toEqual(["nighttime"])
    expect(synonymsOf(TABLE, [], () => false)).toEqual([])
  })

  it(`widens one question with at most ${MAX_SYNONYMS} synonyms, the first words' first`, () => {
    const many = synonymTable(
      Array.from({ length: 64 }, (_, i) => `w${String(i).padStart(2, "0")} a${i} b${i} c${i} d${i}`).join("\n")
    )
    const words = Array.from({ length: 64 }, (_, i) => `w${String(i).padStart(2, "0")}`)
    const added = synonymsOf(many, words, () => false)
    expect(added).toHaveLength(MAX_SYNONYMS)
    expect(added.slice(0, 5)).toEqual(["a0", "b0", "c0", "d0", "a1"])
  })

  it("loads at the first lookup; a table that cannot load says why once and finds nothing", () => {
    let loads = 0
    const lazy = lazySynonymTable(
      () => {
        loads++
        return TABLE
      },
      () => expect.unreachable()
    )
    expect(loads).toBe(0)
    expect(lazy.of("client")).toEqual(["customer"])
    expect(lazy.of("bill")).toHaveLength(3)
    expect(loads).toBe(1)

    const heard: Array<unknown> = []
    const broken = lazySynonymTable(
      () => {
        throw new Error("ENOENT: no such file")
      },
      (e) => heard.push(e)
    )
    expect(broken.of("client")).toEqual([])
    expect(broken.of("bill")).toEqual([])
    expect(heard.map(String)).toEqual(["Error: ENOENT: no such file"])
  })
})
