import { Effect, Option } from "effect"
import { passageContextId } from "../domain/context-id.js"
import { type QueryMode, Score, SearchHit, type SearchRequest, SearchResponse, sourceLocationOf } from "./contract.js"
import { fuseKeepingExact } from "./fusion.js"
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

/**
 * Ranks chunks for a query: hybrid (words-only and vector candidates fused by `convexFusion`,
 * the words-only side's leading exact matches kept first) when vector candidates are given,
 * lexical otherwise. Filters apply to both lists, so no result
 * outside them can appear.
 */
export const rankChunks = (
  request: SearchRequest,
  vectors: Option.Option<VectorCandidates>,
  projects: ProjectReading = "read"
) =>
  Effect.gen(function* () {
    if (Option.isSome(vectors)) {
      const n = candidatesFor(request)
      const lexical = yield* searchLexical(request.query, request.filters, n, 0, projects)
      const allowed = yield* allowedChunkIds(
        vectors.value.hits.map((h) => h.id),
        request.filters
      )
      const vectorRanked = vectors.value.hits.filter((h) => allowed.has(h.id))
      const fused = fuseKeepingExact(
        [
          // A lexical rank is lower-is-better (FTS5's sign); fusion wants higher-is-better.
          lexical.map((r) => ({ id: r.chunk_id, score: -r.rank })),
          vectorRanked.map((h) => ({ id: h.id, score: h.score }))
        ],
        leadingExact(lexical)
      )
      const page = fused.slice(request.offset, request.offset + request.limit)
      // Only the page's vector-only chunks are read with their text (lexical rows already are).
      const rows = new Map<number, ChunkRow>(lexical.map((r) => [r.chunk_id, r]))
      const unread = page.map((f) => f.id).filter((id) => !rows.has(id))
      for (const row of yield* chunksByIds(unread, {})) rows.set(row.chunk_id, row)
      const hybrid: RankedChunks = {
        mode: "hybrid",
        ranked: page.flatMap((f) => {
          const row = rows.get(f.id)
          return row === undefined ? [] : [{ row, score: new Score({ kind: "fused", value: f.score }) }]
        }),
        more: fused.length > request.offset + request.limit
      }
      return hybrid
    }
    const rows = yield* searchLexical(request.query, request.filters, request.limit + 1, request.offset, projects)
    const lexical: RankedChunks = {
      mode: "lexical",
      ranked: rows.slice(0, request.limit).map((row) => ({ row, score: new Score({ kind: "bm25", value: row.rank }) })),
      more: rows.length > request.limit
    }
    return lexical
  })

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
    const synonyms = yield* searchedSynonyms(request.query, request.filters)
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
