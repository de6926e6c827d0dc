import type { CodeForm } from "./query-terms.js"

/**
 * The second stage of words-only search: BM25 finds candidates, this orders them by what BM25
 * cannot see. Pure, over rows already read, so it costs no SQL. Weights chosen on the tuned-on
 * part of the recall benchmark (bench/README.md, `recall`); without the turn's evidence MRR@10 fell
 * from 0.82 to 0.75 there, with the request counted in full to 0.72, without exact words to 0.81.
 */

/** What the reranker reads of a candidate chunk. */
export interface Candidate {
  readonly chunk_id: number
  readonly message_id: number
  readonly session_id: string | null
  readonly turn_number: number
  readonly role: string
  /** `request`, `commentary` or `final_answer`: only a final answer takes its turn's evidence in full. */
  readonly kind: string
  readonly text: string
  /** FTS5 bm25() of the chunk for the whole candidate expression: negative, lower is better; 0 when it did not match. */
  readonly rank: number
}

/** What the query asks, as the reranker uses it. */
export interface RerankQuery {
  /** Content words, lower-cased (conversational filler left out, and common words unless a filter narrows the search). */
  readonly words: ReadonlyArray<string>
  readonly forms: ReadonlyArray<CodeForm>
}

export interface Reranked<C extends Candidate> {
  readonly row: C
  /** Higher is better; comparable only within one search. */
  readonly score: number
  /** The chunk holds every code form the query names, or every content word in its written form. */
  readonly exact: boolean
}

/** Each content word found in its written form (not only as a stem or part) adds this share of BM25. */
export const EXACT_WORD_WEIGHT = 0.5
/** The query's code forms found as written (`--retries 1`, not `retry`): their share adds this. */
export const CODE_FORM_WEIGHT = 2
/** A message inherits this share of the best other message of its own turn (the question of an answer). */
export const TURN_WEIGHT = 0.8
/**
 * What a message other than the final answer (the request, the agent's progress notes) takes of
 * its turn's evidence instead: "Looking at the test first." must not rise above the request it
 * merely follows.
 */
export const TURN_WEIGHT_OTHER = 0.2
/** And this share of the best message of the turn before or after it (a follow-up, its question). */
export const NEIGHBOUR_WEIGHT = 0.25
/**
 * The person's own message counts this much: a question repeats the words of what people later
 * ask, its answer is what they want to find, and it sits right beside it in the turn.
 */
export const REQUEST_WEIGHT = 0.6
/**
 * A chunk's score is raised by this share of its session's coverage of the question (the
 * share of the content words any of the session's candidates holds): a turn in the
 * conversation that was about the whole question beats an equally good match in one that
 * shares a single word with it. On the recall benchmark MRR@10 rose 0.816 -> 0.828 on the
 * tuned-on part and 0.688 -> 0.704 on the held-out part (flat from 0.5 to 2; squared, it helped
 * less).
 */
export const SESSION_WEIGHT = 1

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u

/** Whether `needle` occurs in `text` with no letter or digit joined to either end. */
export const containsWhole = (text: string, needle: string): boolean => {
  if (needle.length === 0) return false
  let at = text.indexOf(needle)
  while (at >= 0) {
    const before = text[at - 1]
    const after = text[at + needle.length]
    const startsWord = LETTER_OR_DIGIT.test(needle[0] ?? "")
    const endsWord = LETTER_OR_DIGIT.test(needle[needle.length - 1] ?? "")
    if (
      (!startsWord || before === undefined || !LETTER_OR_DIGIT.test(before)) &&
      (!endsWord || after === undefined || !LETTER_OR_DIGIT.test(after))
    )
      return true
    at = text.indexOf(needle, at + 1)
  }
  return false
}

interface OwnEvidence {
  readonly score: number
  readonly exact: boolean
}

/** A chunk's own evidence: BM25 raised by exact words and exact code forms. */
export const ownEvidence = (candidate: Candidate, query: RerankQuery): OwnEvidence => {
  const text = candidate.text.toLowerCase()
  const exactWords = query.words.filter((w) => containsWhole(text, w)).length
  const wordShare = query.words.length === 0 ? 0 : exactWords / query.words.length
  const forms = query.forms.filter((f) => containsWhole(text, f.literal)).length
  const formShare = query.forms.length === 0 ? 0 : forms / query.forms.length
  const bm25 = Math.max(0, -candidate.rank)
  const score = bm25 * (1 + EXACT_WORD_WEIGHT * wordShare + CODE_FORM_WEIGHT * formShare)
  const exact = query.forms.length > 0 ? forms === query.forms.length : query.words.length >= 2 && wordShare === 1
  return { score, exact }
}

/** What a chunk's coverage is counted over: its session, or the message itself when it has none (a note). */
export const coverageGroup = (candidate: Candidate): string => candidate.session_id ?? `message ${candidate.message_id}`

/**
 * For each coverage group, the share of the query's content words that one of its candidates
 * holds written whole (as `ownEvidence` counts exact words). Pure, over the candidates only.
 */
export const sessionCoverage = (
  candidates: ReadonlyArray<Candidate>,
  words: ReadonlyArray<string>
): ReadonlyMap<string, number> => {
  const found = new Map<string, Set<string>>()
  for (const c of candidates) {
    const group = coverageGroup(c)
    const held = found.get(group) ?? new Set<string>()
    found.set(group, held)
    const text = c.text.toLowerCase()
    for (const w of words) if (!held.has(w) && containsWhole(text, w)) held.add(w)
  }
  return new Map([...found].map(([group, held]) => [group, words.length === 0 ? 0 : held.size / words.length]))
}

const turnKey = (session: string, turn: number) => `${session}\u0000${turn}`

/**
 * Orders candidates: each chunk's own evidence, plus a share of its turn's best other message
 * (an answer whose question matched) and of the neighbouring turns' (a follow-up), the person's
 * own messages weighted down, all raised by how much of the question its session holds. Copies
 * of one text, and ties, keep the candidates' order (BM25's, with its tie-breaks).
 */
export const rerank = <C extends Candidate>(
  candidates: ReadonlyArray<C>,
  query: RerankQuery
): ReadonlyArray<Reranked<C>> => {
  const own = candidates.map((c) => ownEvidence(c, query))
  // The best own score of each message, and of each turn's messages.
  const byMessage = new Map<number, number>()
  candidates.forEach((c, i) => {
    byMessage.set(c.message_id, Math.max(byMessage.get(c.message_id) ?? 0, own[i]?.score ?? 0))
  })
  const byTurn = new Map<string, Array<{ message: number; score: number }>>()
  for (const c of candidates) {
    if (c.session_id === null) continue
    const key = turnKey(c.session_id, c.turn_number)
    const list = byTurn.get(key) ?? []
    if (!list.some((m) => m.message === c.message_id))
      list.push({ message: c.message_id, score: byMessage.get(c.message_id) ?? 0 })
    byTurn.set(key, list)
  }
  const coverage = sessionCoverage(candidates, query.words)
  const bestIn = (session: string, turn: number, except: number) =>
    Math.max(0, ...(byTurn.get(turnKey(session, turn)) ?? []).filter((m) => m.message !== except).map((m) => m.score))
  const scored = candidates.map((row, index) => {
    const mine = own[index] ?? { score: 0, exact: false }
    let score = mine.score
    if (row.session_id !== null) {
      const share = row.kind === "final_answer" ? TURN_WEIGHT : TURN_WEIGHT_OTHER
      score += share * bestIn(row.session_id, row.turn_number, row.message_id)
      score +=
        NEIGHBOUR_WEIGHT *
        Math.max(
          bestIn(row.session_id, row.turn_number - 1, row.message_id),
          bestIn(row.session_id, row.turn_number + 1, row.message_id)
        )
    }
    if (row.role === "user") score *= REQUEST_WEIGHT
    score *= 1 + SESSION_WEIGHT * (coverage.get(coverageGroup(row)) ?? 0)
    return { row, score, exact: mine.exact, index }
  })
  // The same text scores as its best copy, so BM25's tie-breaks still order copies (a note
  // ahead of the transcript echo of it, whose turn would otherwise lift it).
  const bestOfText = new Map<string, number>()
  for (const s of scored) bestOfText.set(s.row.text, Math.max(bestOfText.get(s.row.text) ?? 0, s.score))
  for (const s of scored) s.score = bestOfText.get(s.row.text) ?? s.score
  return scored
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map(({ row, score, exact }) => ({ row, score, exact }))
}
