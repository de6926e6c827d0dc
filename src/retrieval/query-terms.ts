/**
 * What a search query asks for, read once: its content words (conversational filler removed),
 * the code forms it names (flags with their value, paths, dotted, camelCase and snake_case
 * names) and the FTS5 expression that finds candidates for them. Pure: the ranking of those
 * candidates is `lexical-rerank.ts`.
 */

/** The distinct words of a query, lower-cased, at most 64. */
export const queryWords = (query: string): ReadonlyArray<string> => {
  const words = query.match(/[\p{L}\p{N}_]+/gu) ?? []
  return [...new Set(words.map((w) => w.toLowerCase()))].slice(0, 64)
}

/**
 * Words of conversational phrasing ("how do I…", "what did we decide about…", "remind me…"):
 * they say how a person asks, not what about, and in a question they match every other
 * question. Dropped only when the query has another word, so "how" alone still searches.
 */
export const CONVERSATIONAL_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the and or of to in on at for with by from about into over as is are was were be been being am " +
    "do does did doing done have has had i me my mine we us our ours you your it its this that these those " +
    "what which who whom whose when where why how can could should would will shall may might must there " +
    "here any some again please remind tell show find recall remember know say said ever then so just " +
    "anything something thing things way ok okay hey hi happen happens happened happening"
  ).split(" ")
)

/** The query's words without conversational filler, unless nothing else is left. */
export const contentWords = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const content = words.filter((w) => !CONVERSATIONAL_WORDS.has(w))
  return content.length > 0 ? content : words
}

/** A code form as the query wrote it (lower-cased) and the FTS5 words it splits into. */
export interface CodeForm {
  readonly literal: string
  readonly parts: ReadonlyArray<string>
}

/**
 * Flags with an optional value (`--retries 1`, `-n 3`, `--mode=fast`), paths and dotted names
 * (`src/billing/invoice.ts`, `config.yaml`), camelCase and snake_case names.
 */
const CODE_FORM =
  /--?[A-Za-z][\w-]*(?:[ =](?![-])[\w./:-]+)?|[\w-]*[./][\w-]+(?:[./][\w-]+)*|\b[a-z]+[A-Z]\w*|\b\w+_\w+/g

/** The FTS5 words of a text: what unicode61 would index (letters and digits). */
const ftsWordsOf = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase())

/** The code forms a query names: only those of two or more words (one word is an ordinary term). */
export const codeForms = (query: string): ReadonlyArray<CodeForm> => {
  const forms = new Map<string, CodeForm>()
  // No name is this long; left out, a 4,000-character run cannot make the pattern backtrack for long.
  for (const match of query.replace(/\S{129,}/g, " ").match(CODE_FORM) ?? []) {
    const trimmed = match.replace(/[.,;:]+$/, "")
    const literal = trimmed.toLowerCase()
    const parts = ftsWordsOf(splitCamel(trimmed))
    if (parts.length >= 2 && !forms.has(literal)) forms.set(literal, { literal, parts })
  }
  return [...forms.values()].slice(0, 8)
}

/** `parseInstant` -> `parse Instant`: camelCase boundaries as spaces. */
const splitCamel = (text: string) => text.replace(/([a-z\d])([A-Z])/g, "$1 $2")

/**
 * An FTS5 phrase: the words quoted as one string, which FTS5 matches only adjacent and in order
 * (each word through the same porter stemmer as the index). Words are letters and digits only,
 * so no query can be an FTS syntax error.
 */
const phrase = (words: ReadonlyArray<string>) => `"${words.join(" ")}"`

/**
 * Everything a query's candidates are found by: its words (any may match, BM25 ranks by how
 * many and how rare), each code form's phrase (a row with the phrase matches it once more and
 * ranks higher), and each code form written joined
 * (`retry_count` also finds `retryCount`, which the index keeps as one word).
 */
export const candidateMatch = (words: ReadonlyArray<string>, forms: ReadonlyArray<CodeForm>): string | null => {
  if (words.length === 0) return null
  const terms = words.map((w) => `"${w}"`)
  for (const form of forms) {
    terms.push(phrase(form.parts))
    const joined = form.parts.join("")
    if (form.parts.length <= 4 && !words.includes(joined)) terms.push(`"${joined}"`)
  }
  return [...new Set(terms)].join(" OR ")
}

/** The phrases worth finding on their own: each code form's (its rows may be few among many stems). */
export const exactMatches = (forms: ReadonlyArray<CodeForm>): ReadonlyArray<string> =>
  forms.map((form) => phrase(form.parts))
