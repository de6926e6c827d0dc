import { type SearchRequest, SearchResponse, TimeFilter } from "./contract.js"
import { type FoundTimePhrase, findTimePhrase } from "./time-phrases.js"

/**
 * Date phrases in a search, as the daemon answers every search (the CLI and its fast path, MCP):
 * a phrase outside quotes and code becomes the request's `since`/`until` and leaves the ranked
 * words, unless the request gave `since` or `until` itself (those win, and the phrase stays words).
 * The answer says what was read in `time_filter`, so no caller mistakes a filtered answer for all of it.
 */

/** A time as the person reads it in `timeZone`: `2026-11-23 00:00`. */
const localTime = (iso: string, timeZone: string) =>
  new Intl.DateTimeFormat("sv-SE", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  }).format(new Date(iso))

const rangeWords = (found: FoundTimePhrase, timeZone: string) =>
  found.since !== null && found.until !== null
    ? `from ${localTime(found.since, timeZone)} to ${localTime(found.until, timeZone)}`
    : found.since !== null
      ? `from ${localTime(found.since, timeZone)} on`
      : `before ${localTime(found.until ?? "", timeZone)}`

const noteOf = (found: FoundTimePhrase, applied: boolean, timeZone: string, searched: string) =>
  applied
    ? `"${found.phrase}" read as a time filter, ${rangeWords(found, timeZone)} (${timeZone}): only results from then; searched for "${searched}"`
    : `"${found.phrase}" not read as a time filter: the request gave since or until, which win; searched as words`

/** The time bounds a read takes: a search's filters, prompt recall's. */
export interface TimeBounds {
  readonly since?: string | undefined
  readonly until?: string | undefined
}

/**
 * The words to rank and the bounds to apply for `query`, and the filter to report; the query
 * and bounds as they were when the query holds no phrase, or gave `since`/`until` itself.
 */
export const readTimePhrase = <B extends TimeBounds>(
  query: string,
  bounds: B,
  nowMs: number,
  timeZone: string
): { readonly query: string; readonly bounds: B; readonly filter: TimeFilter | undefined } => {
  const found = findTimePhrase(query, nowMs, timeZone)
  if (found === null) return { query, bounds, filter: undefined }
  const explicit = bounds.since !== undefined || bounds.until !== undefined
  // A query that was only a date phrase still needs words: it searches the phrase as written.
  const searched = explicit || found.rest === "" ? query : found.rest
  const filter = new TimeFilter({
    phrase: found.phrase,
    applied: !explicit,
    since: found.since,
    until: found.until,
    time_zone: timeZone,
    searched,
    note: noteOf(found, !explicit, timeZone, searched)
  })
  if (explicit) return { query, bounds, filter }
  const read = {
    ...bounds,
    ...(found.since === null ? {} : { since: found.since }),
    ...(found.until === null ? {} : { until: found.until })
  }
  return { query: searched, bounds: read, filter }
}

/** The request to run and the filter to report, or the request as it was when the query holds no phrase. */
export const applyTimePhrase = (
  request: SearchRequest,
  nowMs: number,
  timeZone: string
): { readonly request: SearchRequest; readonly filter: TimeFilter | undefined } => {
  const read = readTimePhrase(request.query, request.filters, nowMs, timeZone)
  if (read.filter === undefined || !read.filter.applied) return { request, filter: read.filter }
  return { request: { ...request, query: read.query, filters: read.bounds }, filter: read.filter }
}

/** The answer as the person asked: their own query, and what the phrase did. */
export const withTimeFilter = (
  response: SearchResponse,
  query: string,
  filter: TimeFilter | undefined
): SearchResponse => (filter === undefined ? response : new SearchResponse({ ...response, query, time_filter: filter }))
