import { Effect, Option } from "effect"
import { passageContextId } from "../domain/context-id.js"
import { type QueryMode, Score, SearchHit, type SearchRequest, SearchResponse, sourceLocationOf } from "./contract.js"
import { convexFusion, fuseKeepingExact, type Scored } from "./fusion.js"
import {
  allowedChunkIds,
  type ChunkRow,
  chunksByIds,
  type LexicalRow,
  type ProjectReading,
  projectNamedIn,
  searchedSynonyms,
  searchLexical
} from "./lexical-search.js"
import { applyTextBudget } from "./text-budget.js"

/** Nearest chunks for the query, from the vector index (cosine similarity, best first). */
export interface VectorCandidates {
  readonly hits: ReadonlyArray<{ readonly id: number; readonly score: number }>
}

/** Why a search could not use vectors: reported with the lexical answer. */
export type LexicalReason = string

export const toHit = (row: ChunkRow, score: Score): SearchHit =>
  new SearchHit({
    context_id: passageContextId(row.message_id, row),
    text: row.text,
    text_truncated: false,
    source_type: row.source_type,
    agent: row.agent,
    session_id: row.session_id,
    turn_id: row.turn_id,
    turn_number: row.turn_number,
    role: row.role,
    kind: row.kind,
    project: row.cwd,
    timestamp: row.timestamp,
    source: sourceLocationOf(row),
    chunk: { ordinal: row.ordinal, char_start: row.char_start, char_end: row.char_end },
    score
  })

/** How many candidates each list contributes to fusion for a page. */
const candidatesFor = (request: SearchRequest) => Math.min(500, Math.max(50, (request.offset + request.limit) * 3))

/** The words-only side's leading exact matches (`fuseKeepingExact`): the run of exact rows it starts with. */
const leadingExact = (rows: ReadonlyArray<LexicalRow>) => {
  const end = rows.findIndex((r) => !r.exact)
  return (end === -1 ? rows : rows.slice(0, end)).map((r) => r.chunk_id)
}

/** One page of ranked chunks: each row with its score, and whether more follow. */
export interface RankedChunks {
  readonly mode: QueryMode
  readonly ranked: ReadonlyArray<{ readonly row: ChunkRow; readonly score: Score }>
  readonly more: boolean
}

/** The question and the agent's other wordings of it (decision 0029), each searched words-only. */
export const wordingsOf = (request: SearchRequest): ReadonlyArray<string> => [
  request.query,
  ...(request.rephrasings ?? [])
]

/**
 * The question weighs as much as all its rephrasings together: they are the asking agent's
 * guesses at the words of the answer, and a wrong guess must not outvote what was asked.
 */
export const wordingWeights = (wordings: number): ReadonlyArray<number> =>
  wordings <= 1 ? [1] : [0.5, ...Array.from({ length: wordings - 1 }, () => 0.5 / (wordings - 1))]

/** A words-only list as fusion takes it: FTS5's rank is lower-is-better, fusion wants higher-is-better. */
const scoredOf = (rows: ReadonlyArray<LexicalRow>): ReadonlyArray<Scored<number>> =>
  rows.map((r) => ({ id: r.chunk_id, score: -r.rank }))

/**
 * The words-only side of a fused search: `n` candidates for the question and for each of its
 * rephrasings, the lists fused by `convexFusion` (a lone question's list is only scaled). Only
 * the question's own leading exact matches are kept first: a rephrasing is the agent's guess.
 */
const wordsSide = (request: SearchRequest, n: number, projects: ProjectReading) =>
  Effect.gen(function* () {
    const lists = yield* Effect.forEach(wordingsOf(request), (wording) =>
      searchLexical(wording, request.filters, n, 0, projects)
    )
    const own = lists[0] ?? []
    return {
      rows: lists.flat(),
      scored: convexFusion(lists.map(scoredOf), wordingWeights(lists.length)),
      exact: leadingExact(own)
    }
  })

/** One page of the question's words-only ranking, paged past the reranked pool by BM25 (no fusion). */
const wordsOnlyPage = (request: SearchRequest, projects: ProjectReading) =>
  Effect.map(
    searchLexical(request.query, request.filters, request.limit + 1, request.offset, projects),
    (rows): RankedChunks => ({
      mode: "lexical",
      ranked: rows.slice(0, request.limit).map((row) => ({ row, score: new Score({ kind: "bm25", value: row.rank }) })),
      more: rows.length > request.limit
    })
  )

/**
 * One page of the fused ranking: the words-only side (`wordsSide`) and, when given, the vector
 * candidates that pass the filters, by `fuseKeepingExact`. Only the page's vector-only chunks are
 * read with their text (words-only rows already are).
 */
const fusedPage = (request: SearchRequest, vectors: Option.Option<VectorCandidates>, projects: ProjectReading) =>
  Effect.gen(function* () {
    const words = yield* wordsSide(request, candidatesFor(request), projects)
    const lists: Array<ReadonlyArray<Scored<number>>> = [words.scored]
    if (Option.isSome(vectors)) {
      const allowed = yield* allowedChunkIds(
        vectors.value.hits.map((h) => h.id),
        request.filters
      )
      lists.push(vectors.value.hits.filter((h) => allowed.has(h.id)))
    }
    const fused = fuseKeepingExact(lists, words.exact)
    const page = fused.slice(request.offset, request.offset + request.limit)
    const rows = new Map<number, ChunkRow>(words.rows.map((r) => [r.chunk_id, r]))
    const unread = page.map((f) => f.id).filter((id) => !rows.has(id))
    for (const row of yield* chunksByIds(unread, {})) rows.set(row.chunk_id, row)
    const ranked: RankedChunks = {
      mode: Option.isSome(vectors) ? "hybrid" : "lexical",
      ranked: page.flatMap((f) => {
        const row = rows.get(f.id)
        return row === undefined ? [] : [{ row, score: new Score({ kind: "fused", value: f.score }) }]
      }),
      more: fused.length > request.offset + request.limit
    }
    return ranked
  })

/**
 * Ranks chunks for a query: fused when vector candidates or rephrasings are given (`fusedPage`,
 * the question's leading exact matches kept first), the question's words-only ranking otherwise.
 * Filters apply to every list, so no result outside them can appear.
 */
export const rankChunks = (
  request: SearchRequest,
  vectors: Option.Option<VectorCandidates>,
  projects: ProjectReading = "read"
) =>
  Option.isNone(vectors) && wordingsOf(request).length === 1
    ? wordsOnlyPage(request, projects)
    : fusedPage(request, vectors, projects)

/**
 * Answers a search (`rankChunks`), lexical with the reason when no vector candidates are given;
 * the text budget applies last. The answer names the synonyms its words-only side searched.
 */
export const search = (
  request: SearchRequest,
  vectors: Option.Option<VectorCandidates>,
  lexicalReason: LexicalReason
) =>
  Effect.gen(function* () {
    const { mode, ranked, more } = yield* rankChunks(request, vectors)
    const hits = ranked.map((r) => toHit(r.row, r.score))
    const budgeted = applyTextBudget(
      hits,
      (h) => h.text,
      (h, text) => new SearchHit({ ...h, text, text_truncated: true })
    )
    const consumed = request.offset + budgeted.taken
    const synonyms = [
      ...new Set(
        (yield* Effect.forEach(wordingsOf(request), (wording) => searchedSynonyms(wording, request.filters))).flat()
      )
    ]
    const project = yield* projectNamedIn(request.query, request.filters)
    return new SearchResponse({
      query: request.query,
      query_mode: mode,
      query_mode_reason: mode === "lexical" ? lexicalReason : null,
      results: budgeted.items,
      offset: request.offset,
      limit: request.limit,
      next_offset: more || budgeted.taken < hits.length ? consumed : null,
      truncated: budgeted.truncated,
      returned_chars: budgeted.returnedChars,
      ...(project === undefined ? {} : { project_named: project }),
      ...(synonyms.length === 0 ? {} : { synonyms_searched: synonyms })
    })
  })
