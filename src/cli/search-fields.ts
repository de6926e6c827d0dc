import { KNOWN_SOURCE_TYPES } from "../history/source-type.js"
import { SearchRequest } from "../retrieval/contract.js"
import { AGENT_FIELD, DIRECTORY_FIELD, type RequestFields, TIME_FIELD } from "./request-options.js"

/**
 * `blctx search`'s options: every field of the request but the query (its words are the
 * arguments) and the rephrasings, which are for an agent bridging a person's paraphrase (a person
 * at a terminal searches again in other words). The full CLI derives its options from these
 * (`history-commands.ts`) and the fast path its option table (`fast-search-derive.ts`), so the
 * two read the same command lines.
 */
export const SearchOptionsRequest = SearchRequest.omit("query", "rephrasings")

export const SEARCH_FIELDS: RequestFields = {
  limit: {},
  offset: {},
  "filters.project": DIRECTORY_FIELD,
  "filters.session": { pseudo: "ID" },
  "filters.since": TIME_FIELD,
  "filters.until": TIME_FIELD,
  "filters.source_type": { choices: KNOWN_SOURCE_TYPES },
  "filters.agent": AGENT_FIELD
}
