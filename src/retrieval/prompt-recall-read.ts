import { Effect, Option } from "effect"
import { sourceLocationOf } from "./contract.js"
import type { ChunkRow } from "./lexical-search.js"
import type { PromptRecallHit, PromptRecallRequest, PromptRecallResponse } from "./prompt-recall.js"
import { rankChunks, type VectorCandidates } from "./search.js"

/** How many more hits than asked for are ranked before the floor is applied. */
export const RECALL_OVERFETCH = 5

/** Words too common to say what a prompt is about. */
const STOPWORDS = new Set(
  (
    "the and for are but not you your yours all any can had has have her him his how its our out who what when " +
    "where which why will with would could should this that these those there their them they then than from " +
    "into onto over under about after before again also just like more most much some such very was were been " +
    "being does did doing done let lets get got make made use used using want need please thanks thank okay yes " +
    "now one two may might must shall here only own same too each few both other off once because while until " +
    "between through during above below upon ever every nor its it's i'm i've don't can't won't isn't"
  ).split(" ")
)

const wordsOf = (text: string): ReadonlyArray<string> =>
  (text.match(/[\p{L}\p{N}_]+/gu) ?? []).map((w) => w.toLowerCase())

/** The prompt's distinct meaningful terms: lowercased words of three or more characters, not stopwords. */
export const meaningfulTerms = (prompt: string): ReadonlySet<string> =>
  new Set(wordsOf(prompt).filter((w) => w.length >= 3 && !STOPWORDS.has(w)))

/** The share (0..1) of `terms` that appear as words of `text`; 0 when there are no terms. */
export const termShare = (terms: ReadonlySet<string>, text: string): number => {
  if (terms.size === 0) return 0
  const words = new Set(wordsOf(text))
  let found = 0
  for (const term of terms) if (words.has(term)) found++
  return found / terms.size
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x))

const hitOf = (row: ChunkRow, relevance: number): PromptRecallHit => ({
  text: row.text,
  source: sourceLocationOf(row),
  source_type: row.source_type,
  agent: row.agent,
  session_id: row.session_id,
  timestamp: row.timestamp,
  role: row.role,
  relevance
})

/**
 * Prompt-time recall: the prompt is searched as any query (hybrid when vector candidates are
 * given, else lexical), a few more hits than asked for, and only hits that clear `floor` on an
 * absolute measure are kept, in the search's order: in hybrid mode the hit's cosine similarity to
 * the prompt (a hit outside the vector candidates is less similar than all of them, so it is
 * left out), in lexical mode the share of the prompt's meaningful terms its text contains. Never
 * a rank: the best hit of an unrelated prompt is still unrelated.
 */
export const recallPrompt = (request: PromptRecallRequest, vectors: Option.Option<VectorCandidates>) =>
  Effect.gen(function* () {
    const { mode, ranked } = yield* rankChunks(
      {
        query: request.prompt,
        filters: {
          ...(request.since === undefined ? {} : { since: request.since }),
          ...(request.until === undefined ? {} : { until: request.until })
        },
        limit: request.limit + RECALL_OVERFETCH,
        offset: 0
      },
      vectors,
      // Recall keeps only hits that clear the floor on the prompt's own words or meaning: a
      // project's turns listed by its name alone would take the places of those it keeps.
      "as words"
    )
    let scored: ReadonlyArray<{ readonly row: ChunkRow; readonly relevance: number | undefined }>
    if (Option.isSome(vectors)) {
      const similarity = new Map(vectors.value.hits.map((h) => [h.id, h.score]))
      scored = ranked.map(({ row }) => ({ row, relevance: similarity.get(row.chunk_id) }))
    } else {
      const terms = meaningfulTerms(request.prompt)
      scored = ranked.map(({ row }) => ({ row, relevance: termShare(terms, row.text) }))
    }
    const hits = scored.flatMap(({ row, relevance }) =>
      relevance !== undefined && relevance > 0 && relevance >= request.floor ? [hitOf(row, clamp01(relevance))] : []
    )
    const response: PromptRecallResponse = { query_mode: mode, hits: hits.slice(0, request.limit) }
    return response
  })
