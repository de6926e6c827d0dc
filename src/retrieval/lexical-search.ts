import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AUTHORED_UPDATE } from "../history/source-type.js"
import { redactSecrets } from "../redaction/redact.js"
import { countOf, idRows, rowsOf } from "../sql/sql-rows.js"
import type { MessageKind } from "../transcripts/classification.js"
import { agentClause, checkAgent, MESSAGE_AGENT } from "./agent-filter.js"
import type { SearchFilters } from "./contract.js"
import { rerank } from "./lexical-rerank.js"
import { projectNamedBy } from "./named-project.js"
import { ProvenanceColumns } from "./provenance-row.js"
import {
  CONVERSATIONAL_WORDS,
  type CodeForm,
  candidateMatch,
  codeForms,
  contentWords,
  exactMatches,
  queryWords
} from "./query-terms.js"
import { Synonyms, synonymsOf } from "./synonyms.js"
import { parseInstant, TimeRangeError } from "./time-range.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Int = Schema.Number

/** One chunk that matched, with everything a hit needs (its provenance: see `ProvenanceRow`). */
export const ChunkRow = Schema.Struct({
  chunk_id: Int,
  ordinal: Int,
  char_start: Int,
  char_end: Int,
  text: Text,
  message_id: Int,
  session_id: NullText,
  turn_id: NullText,
  turn_number: Int,
  role: Text,
  kind: Text,
  cwd: NullText,
  timestamp: NullText,
  source_type: Text,
  rank: Schema.Number,
  ...ProvenanceColumns
})
export type ChunkRow = typeof ChunkRow.Type
const chunkRows = rowsOf(ChunkRow)

export { queryWords }

/** Words as an FTS5 expression: each quoted (so no query can be an FTS syntax error), any may match. */
export const matchOf = (words: ReadonlyArray<string>) =>
  words.length === 0 ? null : words.map((w) => `"${w}"`).join(" OR ")

/**
 * The words of a query as an FTS5 expression: each word quoted (so punctuation and FTS syntax
 * in a person's query can never be an error), any of them may match, BM25 ranks by how many
 * and how rare. Returns null when the query has no words.
 */
export const ftsQuery = (query: string): string | null => matchOf(queryWords(query))

/**
 * A word in more than this share of the chunks is common: it ranks little and matches much. At
 * 100k chunks of the Zipf history, 0.2 -> 0.1 took the lexical ranking from 14 to 11 ms mean (p95
 * 44 -> 26 ms; 0.05: 7 ms, p95 15) while the labelled recall set moved by at most 0.01 MRR.
 */
export const COMMON_WORD_SHARE = 0.1
/** How long a connection trusts the chunk count and the words' document counts it has read. */
const FREQUENCY_TTL_MS = 10 * 60 * 1000

interface Frequencies {
  total: { readonly chunks: number; readonly at: number } | undefined
  readonly words: Map<string, { readonly docs: number; readonly at: number }>
}
/** Per connection (a query worker has one), so tests with several databases never mix them. */
const frequencies = new WeakMap<SqlClient.SqlClient, Frequencies>()

/**
 * The words a search matches on: common words are left out when the query has a rarer one the
 * index holds, so a question full of "the", "and" or "we" does not score and join most of the
 * index. Document
 * counts are read once per word and kept for ten minutes (they only grow, slowly).
 */
export const matchingWords = (query: string, now = Date.now()) => withoutCommonWords(queryWords(query), now)

/** What the index holds of some words: whether a word is in any chunk, and rare or common there. */
interface WordCounts {
  readonly held: (word: string) => boolean
  /** In at least one chunk and at most a `COMMON_WORD_SHARE` of them. */
  readonly rare: (word: string) => boolean
  readonly common: (word: string) => boolean
}

/** How many chunks hold each word, read once per word and connection and kept ten minutes. */
const wordCounts = (words: ReadonlyArray<string>, now: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let cache = frequencies.get(sql)
    if (cache === undefined) {
      cache = { total: undefined, words: new Map() }
      frequencies.set(sql, cache)
    }
    if (cache.total === undefined || now - cache.total.at > FREQUENCY_TTL_MS) {
      cache.total = { chunks: yield* countOf(sql`SELECT count(*) AS n FROM chunks`), at: now }
    }
    const docs = new Map<string, number>()
    for (const word of words) {
      let known = cache.words.get(word)
      if (known === undefined || now - known.at > FREQUENCY_TTL_MS) {
        const n = yield* countOf(sql`SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ${`"${word}"`}`)
        known = { docs: n, at: now }
        cache.words.set(word, known)
      }
      docs.set(word, known.docs)
    }
    const commonAbove = cache.total.chunks * COMMON_WORD_SHARE
    const count = (word: string) => docs.get(word) ?? 0
    return {
      held: (word) => count(word) > 0,
      rare: (word) => count(word) > 0 && count(word) <= commonAbove,
      common: (word) => count(word) > commonAbove
    } satisfies WordCounts
  })

/** `words` without the common ones, when a rarer word the index holds stays (`matchingWords`). */
const withoutCommonWords = (words: ReadonlyArray<string>, now: number) =>
  Effect.gen(function* () {
    if (words.length < 2) return words
    const counts = yield* wordCounts(words, now)
    // Common words go only for a rarer word the index holds: a typo or a word never seen must
    // not push out the words that match.
    return words.some(counts.rare) ? words.filter((w) => !counts.common(w)) : words
  })

/**
 * The synonyms of a question's content words worth searching: those the index holds, and of
 * them only the ones that are not common (a common synonym adds turns about something else, and
 * costs time in a large index) while the question or a synonym has a rarer word the index holds.
 */
const synonymsToSearch = (words: ReadonlyArray<string>, now: number) =>
  Effect.gen(function* () {
    const table = yield* Effect.serviceOption(Synonyms)
    if (Option.isNone(table)) return [] as ReadonlyArray<string>
    const synonyms = synonymsOf(table.value, words, (w) => CONVERSATIONAL_WORDS.has(w))
    if (synonyms.length === 0) return synonyms
    const counts = yield* wordCounts([...words, ...synonyms], now)
    const held = synonyms.filter(counts.held)
    return words.some(counts.rare) || held.some(counts.rare) ? held.filter(counts.rare) : held
  })

/**
 * Whether a filter keeps only a part of the history (a time, a project, a session). A word common
 * over the whole index can be what tells that part's turns apart ("invoice retries" in October, in
 * a history mostly about billing), and a filtered search joins every match anyway
 * (`rankedChunks`), so a narrowed search keeps its common words.
 */
const narrowsHistory = (filters: SearchFilters) =>
  filters.since !== undefined ||
  filters.until !== undefined ||
  filters.project !== undefined ||
  filters.session !== undefined

/**
 * What words-only search looks for in a query: its content words (common ones left out while a
 * rarer one is searched, unless a filter narrows the search), its code forms, and the synonyms
 * worth searching.
 */
const searchTerms = (query: string, filters: SearchFilters, now: number) =>
  Effect.gen(function* () {
    const content = contentWords(queryWords(query))
    const words = narrowsHistory(filters) ? content : yield* withoutCommonWords(content, now)
    return { words, forms: codeForms(query), synonyms: yield* synonymsToSearch(words, now) }
  })

/**
 * The synonyms a search for `query` adds to its words (none without the thesaurus), so the
 * answer can say why a result holds none of the question's own words. The word counts behind
 * them are cached, so asking again after the search costs no query.
 */
export const searchedSynonyms = (query: string, filters: SearchFilters) =>
  Effect.map(searchTerms(query, filters, Date.now()), (t) => t.synonyms)

/** Milliseconds since the epoch of an ISO timestamp column; NULL when unknown or unreadable. */
const epochMs = (column: string) => `((julianday(${column}) - 2440587.5) * 86400000.0)`

/** Messages in `project` (a cwd as stored) or a directory below it. */
const storedProjectClause = (sql: SqlClient.SqlClient, project: string) =>
  sql`(m.cwd = ${project} OR substr(m.cwd, 1, ${project.length + 1}) = ${`${project}/`})`

/**
 * The WHERE clauses of the explicit filters. Recall is global, across every agent, unless a
 * filter narrows it; an agent filter naming no known agent fails with `UnknownAgent`.
 */
export const filterClauses = (sql: SqlClient.SqlClient, filters: SearchFilters) =>
  Effect.gen(function* () {
    const clauses = []
    if (filters.project !== undefined) {
      // Stored cwds are redacted, and redaction is deterministic: compare like with like.
      clauses.push(storedProjectClause(sql, redactSecrets(filters.project.replace(/\/+$/, "")).text))
    }
    if (filters.session !== undefined) clauses.push(sql`m.session_id = ${filters.session}`)
    if (filters.source_type !== undefined) clauses.push(sql`m.source_type = ${filters.source_type}`)
    const agent = yield* checkAgent(filters.agent)
    if (agent !== undefined) clauses.push(agentClause(sql, agent))
    for (const [bound, op] of [
      [filters.since, ">="],
      [filters.until, "<"]
    ] as const) {
      if (bound === undefined) continue
      const ms = parseInstant(bound)
      if (ms instanceof TimeRangeError) return yield* ms
      clauses.push(sql`${sql.literal(epochMs("m.timestamp"))} ${sql.literal(op)} ${ms}`)
    }
    return clauses
  })

/** What every chunk query selects; `f` is LEFT JOINed, since a note revision has no source file. */
const CHUNK_COLUMNS = `c.id AS chunk_id, c.ordinal, c.char_start, c.char_end, c.text,
  m.id AS message_id, m.session_id, m.turn_id, m.turn_number, m.role, m.kind, m.cwd, m.timestamp, m.source_type,
  ${MESSAGE_AGENT} AS agent, f.path, m.line, m.byte_start, m.byte_end, m.note_id, m.note_revision`

/** A ranked chunk, and whether it holds what the query names exactly (`lexical-rerank.ts`). */
export type LexicalRow = ChunkRow & { readonly exact: boolean }

/**
 * How many of BM25's best chunks the reranker orders (as many as fusion takes for a first page;
 * 100 ranked the recall set no better). Past them, pages follow BM25 alone, so every page of one
 * query comes from the same order.
 */
export const RERANK_POOL = 50
/** How many chunks each of the query's code forms adds, found by its phrase alone. */
const EXACT_POOL = 20

/**
 * Words-only search: BM25 over the chunks' FTS5 index finds candidates for the query's content
 * words, code forms and phrase (`query-terms.ts`); the best `RERANK_POOL` of them, with the rows
 * holding a code form's phrase, are ordered by `rerank`. Ties (the same text) put authored notes ahead of transcript echoes, then newer ahead
 * of older, then a stable id order so pages never shift.
 */
export const searchLexical = (
  query: string,
  filters: SearchFilters,
  limit: number,
  offset: number,
  projects: ProjectReading = "read"
) =>
  Effect.gen(function* () {
    const terms = yield* searchTerms(query, filters, Date.now())
    const project = projects === "read" ? yield* projectAskedAbout(terms, filters) : undefined
    if (project === undefined) return yield* rankedByWords(terms, filters, limit, offset)
    return yield* projectFirst(project, terms, filters, limit, offset)
  })

/**
 * Whether a question that only names a project lists that project's turns first (`"read"`, what a
 * person or agent searching asks for) or is searched as its words (`"as words"`, prompt recall).
 */
export type ProjectReading = "read" | "as words"

/** The project a search for `query` lists first (`projectFirst`), so the answer can say so. */
export const projectNamedIn = (query: string, filters: SearchFilters) =>
  boundedInTimeOnly(filters)
    ? Effect.flatMap(searchTerms(query, filters, Date.now()), (terms) => projectAskedAbout(terms, filters))
    : Effect.succeed(undefined)

/** A search bounded in time and not already narrowed to a project or session. */
const boundedInTimeOnly = (filters: SearchFilters) =>
  (filters.since !== undefined || filters.until !== undefined) &&
  filters.project === undefined &&
  filters.session === undefined

/** What `searchTerms` reads of a query. */
type SearchTerms = Effect.Effect.Success<ReturnType<typeof searchTerms>>

/**
 * The project a question asks about (`named-project.ts`): only in a search bounded in time, not
 * already narrowed to a project or session, whose words (no code forms) all name one project.
 */
const projectAskedAbout = (terms: SearchTerms, filters: SearchFilters) =>
  Effect.gen(function* () {
    if (!boundedInTimeOnly(filters) || terms.forms.length > 0 || terms.words.length === 0) return undefined
    const sql = yield* SqlClient.SqlClient
    const rows = yield* cwdRows(sql`SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL`)
    const cwds = [...new Set(rows.map((r) => r.cwd.replace(/\/+$/, "")))]
    return projectNamedBy(terms.words, cwds)
  })

const cwdRows = rowsOf(Schema.Struct({ cwd: Text }))
const FINAL_ANSWER: MessageKind = "final_answer"

/**
 * The project's own turns of that time first (final answers first, then newest first), each
 * counted exact so fusion keeps the first of them on top; then what the words find elsewhere.
 * Ranks stay in order: the project's turns rank below (ahead of) every word match.
 */
const projectFirst = (project: string, terms: SearchTerms, filters: SearchFilters, limit: number, offset: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = yield* filterClauses(sql, filters)
    const wanted = offset + limit
    const own = yield* chunkRows(sql`
      SELECT ${sql.literal(CHUNK_COLUMNS)}, 0 AS rank
      FROM chunks c
      JOIN messages m ON m.id = c.message_id
      LEFT JOIN source_files f ON f.id = m.source_file_id
      WHERE ${sql.and([storedProjectClause(sql, project), ...where])}
      ORDER BY (m.kind = ${FINAL_ANSWER}) DESC, m.timestamp DESC, c.id ASC
      LIMIT ${wanted}`)
    const ownIds = new Set(own.map((r) => r.chunk_id))
    const others =
      own.length >= wanted
        ? []
        : (yield* rankedByWords(terms, filters, wanted, 0)).filter((r) => !ownIds.has(r.chunk_id))
    const top = Math.min(0, ...others.map((r) => r.rank))
    const first = own.map((r, i) => ({ ...r, rank: top - (own.length - i), exact: true }))
    return [...first, ...others].slice(offset, wanted)
  })

/** Words-only search proper: BM25's candidates for the query's terms, reranked. */
const rankedByWords = (terms: SearchTerms, filters: SearchFilters, limit: number, offset: number) =>
  Effect.gen(function* () {
    const { words, forms, synonyms } = terms
    const match = candidateMatch([...words, ...synonyms], forms)
    if (match === null || limit <= 0) return [] as ReadonlyArray<LexicalRow>
    const pool = yield* rankedChunks(match, filters, RERANK_POOL, 0, "page first")
    const extras = yield* extraCandidates(match, forms, pool, filters)
    const ranked = rerank([...pool, ...extras], { words, forms }).map((r) => ({
      ...r.row,
      rank: -r.score,
      exact: r.exact
    }))
    if (pool.length < RERANK_POOL || offset + limit <= ranked.length) return ranked.slice(offset, offset + limit)
    // Past the reranked places: BM25's own order, without the extras already placed.
    const placed = new Set(extras.map((r) => r.chunk_id))
    const tail = yield* rankedChunks(
      match,
      filters,
      offset + limit - ranked.length + placed.size,
      RERANK_POOL,
      "page first"
    )
    const rest = tail.filter((r) => !placed.has(r.chunk_id)).map((r) => ({ ...r, exact: false }))
    return [...ranked, ...rest].slice(offset, offset + limit)
  })

/**
 * Candidates outside BM25's best: chunks holding a code form's phrase (among many chunks with
 * its stem they can rank far down), each with its BM25 for the whole expression.
 */
const extraCandidates = (
  match: string,
  forms: ReadonlyArray<CodeForm>,
  pool: ReadonlyArray<ChunkRow>,
  filters: SearchFilters
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const have = new Set(pool.map((r) => r.chunk_id))
    const ids = new Set<number>()
    for (const phrase of exactMatches(forms)) {
      for (const row of yield* rankedChunks(phrase, filters, EXACT_POOL, 0, "page first")) {
        if (!have.has(row.chunk_id)) ids.add(row.chunk_id)
      }
    }
    if (ids.size === 0) return [] as ReadonlyArray<ChunkRow>
    const where = yield* filterClauses(sql, filters)
    return yield* chunkRows(sql`
      SELECT ${sql.literal(CHUNK_COLUMNS)}, coalesce(t.rank, 0) AS rank
      FROM chunks c
      JOIN messages m ON m.id = c.message_id
      LEFT JOIN source_files f ON f.id = m.source_file_id
      LEFT JOIN (
        SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ${match} AND rowid IN ${sql.in([...ids])}
      ) t ON t.rowid = c.id
      WHERE ${sql.and([sql`c.id IN ${sql.in([...ids])}`, ...where])}
      ORDER BY rank ASC, (m.source_type = ${AUTHORED_UPDATE}) DESC, m.timestamp DESC, c.id ASC`)
  })

/**
 * Extra places fetched past a page in the one-pass plan: a tie with the page's last place that
 * reaches this far sends the search to the two-pass form.
 */
const TIE_MARGIN = 16

/**
 * The chunks matching an FTS5 expression, best first. "page first": only the best-ranked
 * matches that pass the filters are joined with their messages (a query with a common word
 * matches most chunks, and joining and sorting all of them was most of a search at 100k chunks).
 * One pass takes the matches in rank order until the page plus `TIE_MARGIN` places pass the
 * filters; when the last kept place still ties with the page's last, a second form joins every
 * chunk ranked at least as well as that place. Either way the tie-breaks order exactly the rows
 * "join all" would.
 */
export const rankedChunks = (
  match: string,
  filters: SearchFilters,
  limit: number,
  offset: number,
  plan: "page first" | "join all"
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const where = yield* filterClauses(sql, filters)
    if (plan === "page first" && limit > 0) {
      const kept = limit + offset + TIE_MARGIN
      // FTS5 hands its matches over in rank order, so only rows up to the `kept`-th that passes
      // the filters are joined; sorting every filtered match whole (with its text) was most of a
      // filtered search.
      const best = yield* chunkRows(sql`
        SELECT * FROM (
          SELECT ${sql.literal(CHUNK_COLUMNS)}, chunks_fts.rank AS rank
          FROM chunks_fts
          JOIN chunks c ON c.id = chunks_fts.rowid
          JOIN messages m ON m.id = c.message_id
          LEFT JOIN source_files f ON f.id = m.source_file_id
          WHERE ${sql.and([sql`chunks_fts MATCH ${match}`, ...where])}
          ORDER BY chunks_fts.rank LIMIT ${kept}
        )
        ORDER BY rank ASC, (source_type = ${AUTHORED_UPDATE}) DESC, timestamp DESC, chunk_id ASC`)
      const lastOfPage = best[limit + offset - 1]?.rank
      const lastKept = best[best.length - 1]?.rank
      // Fewer than `kept` rows: every match is here. Otherwise the kept rows hold every match
      // ranked as well as the page's last place only if a worse rank follows it.
      if (best.length < kept || lastOfPage === undefined || (lastKept ?? 0) > lastOfPage) {
        return best.slice(offset, offset + limit)
      }
      return yield* chunkRows(sql`
        SELECT ${sql.literal(CHUNK_COLUMNS)}, t.rank AS rank
        FROM (
          SELECT rowid, rank FROM chunks_fts
          WHERE chunks_fts MATCH ${match} AND rank <= ${lastOfPage}
        ) t
        JOIN chunks c ON c.id = t.rowid
        JOIN messages m ON m.id = c.message_id
        LEFT JOIN source_files f ON f.id = m.source_file_id
        ${where.length === 0 ? sql`` : sql`WHERE ${sql.and(where)}`}
        ORDER BY rank ASC, (m.source_type = ${AUTHORED_UPDATE}) DESC, m.timestamp DESC, c.id ASC
        LIMIT ${limit} OFFSET ${offset}`)
    }
    return yield* chunkRows(sql`
      SELECT ${sql.literal(CHUNK_COLUMNS)}, bm25(chunks_fts) AS rank
      FROM chunks_fts
      JOIN chunks c ON c.id = chunks_fts.rowid
      JOIN messages m ON m.id = c.message_id
      LEFT JOIN source_files f ON f.id = m.source_file_id
      WHERE ${sql.and([sql`chunks_fts MATCH ${match}`, ...where])}
      ORDER BY rank ASC, (m.source_type = ${AUTHORED_UPDATE}) DESC, m.timestamp DESC, c.id ASC
      LIMIT ${limit} OFFSET ${offset}`)
  })

/**
 * Which of `ids` exist and pass the filters, without reading their text: a hybrid search checks
 * all its vector candidates but hydrates only the page it returns.
 */
export const allowedChunkIds = (ids: ReadonlyArray<number>, filters: SearchFilters) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    if (ids.length === 0) return new Set<number>()
    const where = yield* filterClauses(sql, filters)
    const rows = yield* idRows(sql`
      SELECT c.id AS id
      FROM chunks c
      JOIN messages m ON m.id = c.message_id
      WHERE ${sql.and([sql`c.id IN ${sql.in(ids)}`, ...where])}`)
    return new Set(rows.map((r) => r.id))
  })

/** Chunks by id with the same shape, for hits that came from the vector index. */
export const chunksByIds = (ids: ReadonlyArray<number>, filters: SearchFilters) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    if (ids.length === 0) return [] as ReadonlyArray<ChunkRow>
    const where = yield* filterClauses(sql, filters)
    return yield* chunkRows(sql`
      SELECT ${sql.literal(CHUNK_COLUMNS)}, 0 AS rank
      FROM chunks c
      JOIN messages m ON m.id = c.message_id
      LEFT JOIN source_files f ON f.id = m.source_file_id
      WHERE ${sql.and([sql`c.id IN ${sql.in(ids)}`, ...where])}`)
  })
