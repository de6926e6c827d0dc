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

/** The request to run and the filter to report, or the request as it was when the query holds no phrase. */
export const applyTimePhrase = (
  request: SearchRequest,
  nowMs: number,
  timeZone: string
): { readonly request: SearchRequest; readonly filter: TimeFilter | undefined } => {
  const found = findTimePhrase(request.query, nowMs, timeZone)
  if (found === null) return { request, filter: undefined }
  const explicit = request.filters.since !== undefined || request.filters.until !== undefined
  // A query that was only a date phrase still needs words: it searches the phrase as written.
  const searched = explicit || found.rest === "" ? request.query : found.rest
  const filter = new TimeFilter({
    phrase: found.phrase,
    applied: !explicit,
    since: found.since,
    until: found.until,
    time_zone: timeZone,
    searched,
    note: noteOf(found, !explicit, timeZone, searched)
  })
  if (explicit) return { request, filter }
  const filters = {
    ...request.filters,
    ...(found.since === null ? {} : { since: found.since }),
    ...(found.until === null ? {} : { until: found.until })
  }
  return { request: { ...request, query: searched, filters }, filter }
}

/** The answer as the person asked: their own query, and what the phrase did. */
export const withTimeFilter = (
  response: SearchResponse,
  query: string,
  filter: TimeFilter | undefined
): SearchResponse => (filter === undefined ? response : new SearchResponse({ ...response, query, time_filter: filter }))
