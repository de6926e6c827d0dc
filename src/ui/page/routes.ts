/**
 * The page's hash routes, parsed and built in one place. A link the page renders is always a
 * `HashRoute` made here: ids and words go through encodeURIComponent, so nothing taken from
 * history can turn a link into another scheme or another route.
 */

declare const routeBrand: unique symbol
export type HashRoute = string & { readonly [routeBrand]: true }

export type Params = Readonly<Record<string, string>>

export type Route =
  | { readonly view: "search"; readonly params: Params }
  | { readonly view: "session"; readonly id: string; readonly params: Params }
  | { readonly view: "timeline"; readonly params: Params }
  | { readonly view: "notes"; readonly params: Params }
  | { readonly view: "note"; readonly id: string; readonly params: Params }
  | { readonly view: "forget"; readonly params: Params }
  | { readonly view: "health"; readonly params: Params }

const query = (params: Params): string => {
  const pairs = Object.entries(params)
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
  return pairs.length === 0 ? "" : `?${pairs.join("&")}`
}

const route = (path: string, params: Params = {}) => `#/${path}${query(params)}` as HashRoute

export const searchRoute = (params: Params = {}) => route("search", params)
export const sessionRoute = (sessionId: string, params: Params = {}) =>
  route(`session/${encodeURIComponent(sessionId)}`, params)
export const timelineRoute = (params: Params = {}) => route("timeline", params)
export const notesRoute = () => route("notes")
export const noteRoute = (noteId: string) => route(`notes/${encodeURIComponent(noteId)}`)
export const forgetRoute = (params: Params = {}) => route("forget", params)
export const healthRoute = () => route("health")

const paramsOf = (search: string): Params => {
  const out: Record<string, string> = {}
  for (const [k, v] of new URLSearchParams(search)) out[k] = v
  return out
}

const decoded = (part: string): string | undefined => {
  try {
    return decodeURIComponent(part)
  } catch {
    return undefined
  }
}

/** The route a location hash names; anything unknown is the landing view (search without a query). */
export const parseRoute = (hash: string): Route => {
  const body = hash.replace(/^#\/?/, "")
  const mark = body.indexOf("?")
  const path = mark < 0 ? body : body.slice(0, mark)
  const params = paramsOf(mark < 0 ? "" : body.slice(mark + 1))
  const [head, id, ...rest] = path.split("/")
  const one = id !== undefined && id !== "" && rest.length === 0 ? decoded(id) : undefined
  if (head === "session" && one !== undefined) return { view: "session", id: one, params }
  if (head === "notes" && one !== undefined) return { view: "note", id: one, params }
  if (id === undefined || id === "") {
    if (head === "timeline" || head === "notes" || head === "forget" || head === "health") return { view: head, params }
  }
  return { view: "search", params: head === "search" ? params : {} }
}
