import { Context } from "effect"

/**
 * A thesaurus for words-only search: a question says "bills" where the conversation said
 * "invoice", "client" where it said "customer". The words of a question are searched together
 * with their synonyms (`lexical-search.ts`), so the turn that answers it in other words is among
 * the candidates the reranker orders; only the question's own words count as its exact words.
 * The table is WordNet's (derived at build time: `synonyms-derive.ts`), general English chosen
 * by no question of the recall benchmark (decision 0023).
 */
export interface SynonymTable {
  /** The synonyms of a word or of its base form (`bills` -> `bill`), most frequent sense first. */
  readonly of: (word: string) => ReadonlyArray<string>
}

/**
 * The table the search worker widens questions with. Optional: a search without it (a test, a
 * benchmark of the SQL alone) searches the question's own words.
 */
export class Synonyms extends Context.Tag("blctx/Synonyms")<Synonyms, SynonymTable>() {}

/** Candidate base forms of an inflected word, the word first (WordNet lists lemmas only). */
export const baseForms = (word: string): ReadonlyArray<string> => {
  const forms = [word]
  if (word.endsWith("ies")) forms.push(`${word.slice(0, -3)}y`)
  if (word.endsWith("es")) forms.push(word.slice(0, -2))
  if (word.endsWith("s")) forms.push(word.slice(0, -1))
  if (word.endsWith("ed")) forms.push(word.slice(0, -2), word.slice(0, -1))
  if (word.endsWith("ing")) forms.push(word.slice(0, -3), `${word.slice(0, -3)}e`)
  return forms
}

/**
 * A table over the derived text: one line per lemma, `lemma synonym…`, sorted by lemma. Looked
 * up by binary search over the lines, so the table costs little more than its text.
 */
export const synonymTable = (text: string): SynonymTable => {
  const lines = text.split("\n").filter((line) => line.includes(" "))
  const lemmaOf = (line: string) => line.slice(0, line.indexOf(" "))
  const lookup = (lemma: string): ReadonlyArray<string> | undefined => {
    let low = 0
    let high = lines.length - 1
    while (low <= high) {
      const mid = (low + high) >> 1
      const line = lines[mid] ?? ""
      const at = lemmaOf(line)
      if (at === lemma) return line.split(" ").slice(1)
      if (at < lemma) low = mid + 1
      else high = mid - 1
    }
    return undefined
  }
  return {
    of: (word) => {
      for (const form of baseForms(word)) {
        const found = lookup(form)
        if (found !== undefined) return found
      }
      return []
    }
  }
}

/**
 * At most this many synonyms widen one question: each is counted in the index before it is
 * searched, and a question of 64 words (the most a search reads) could otherwise ask for 256.
 * A question that long has words enough of its own.
 */
export const MAX_SYNONYMS = 32

/**
 * The synonyms a question's content words add: none already among its words (or their base
 * forms) and none that `skip` rejects (conversational filler), each once, in the words' order,
 * at most `MAX_SYNONYMS`.
 */
export const synonymsOf = (
  table: SynonymTable,
  words: ReadonlyArray<string>,
  skip: (word: string) => boolean
): ReadonlyArray<string> => {
  const own = new Set(words.flatMap(baseForms))
  const added = new Set<string>()
  for (const word of words) for (const s of table.of(word)) if (!own.has(s) && !skip(s)) added.add(s)
  return [...added].slice(0, MAX_SYNONYMS)
}

const NO_SYNONYMS: SynonymTable = { of: () => [] }

/**
 * A table loaded at its first lookup; when loading fails, `failed` hears why once and every
 * lookup finds nothing (the search goes on with the question's own words).
 */
export const lazySynonymTable = (load: () => SynonymTable, failed: (error: unknown) => void): SynonymTable => {
  let table: SynonymTable | undefined
  const loaded = () => {
    if (table === undefined) {
      try {
        table = load()
      } catch (error) {
        table = NO_SYNONYMS
        failed(error)
      }
    }
    return table
  }
  return { of: (word) => loaded().of(word) }
}
