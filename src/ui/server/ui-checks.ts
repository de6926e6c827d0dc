/**
 * The viewer's refusals, as one pure decision: the facts of a request in, a verdict out. The HTTP
 * app (`ui-http-app.ts`) gathers the facts (headers, the session the cookie names, whether the
 * CSRF header matches) and acts on the verdict; every rule of the page's security lives here.
 */

/** The places the viewer answers. Anything else is `Unknown` (404 once the caller is known). */
export type UiRoute =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Page" }
  | { readonly _tag: "Asset"; readonly name: string }
  | { readonly _tag: "Rpc" }
  | { readonly _tag: "Unknown" }

export interface RequestFacts {
  readonly method: string
  readonly route: UiRoute
  /** The port the listener is bound to: the only Host and Origin accepted name it. */
  readonly port: number
  readonly host: string | undefined
  readonly origin: string | undefined
  readonly secFetchSite: string | undefined
  /** Whether the session cookie names a live session (`false` when absent or unknown). */
  readonly session: boolean
  /** Whether the `x-blctx-csrf` header equals the session's CSRF token. */
  readonly csrf: boolean
}

export type Verdict =
  | { readonly _tag: "Allow"; readonly route: Exclude<UiRoute, { _tag: "Unknown" }> }
  | { readonly _tag: "Refuse"; readonly status: 401 | 403 | 404 | 405; readonly reason: string }

/** What a person reads when the page has no session: the link to ask for. */
export const NO_SESSION_TEXT = "This page needs a session: run `blctx ui` for a new link."

/** The only origin the page is served from: the loopback address and the listener's port. */
export const pageOrigin = (port: number) => `http://127.0.0.1:${port}`

const refuse = (status: 401 | 403 | 404 | 405, reason: string): Verdict => ({ _tag: "Refuse", status, reason })

/** The method each route takes: navigations and assets are read, the protocol is posted. */
const methodFor = (route: UiRoute): string | undefined => {
  switch (route._tag) {
    case "Open":
    case "Page":
    case "Asset":
      return "GET"
    case "Rpc":
      return "POST"
    case "Unknown":
      return undefined
  }
}

/**
 * The origin checks: a Host other than the loopback address and port is a DNS-rebinding page
 * speaking to us under its own name; an Origin other than ours, or a browser saying the request
 * comes from another site, is a cross-site request. A POST must say where it comes from.
 */
const originRefusal = (facts: RequestFacts): Verdict | undefined => {
  const origin = pageOrigin(facts.port)
  if (facts.host !== `127.0.0.1:${facts.port}`) return refuse(403, "the Host is not this page's loopback address")
  if (facts.origin !== undefined && facts.origin !== origin) return refuse(403, "the request comes from another origin")
  if (facts.secFetchSite === "cross-site") return refuse(403, "the request comes from another site")
  if (facts.method === "POST" && facts.origin === undefined) return refuse(403, "a POST must carry its Origin")
  return undefined
}

/** The decision for one request: the first refusal that applies, or the route to answer. */
export const decide = (facts: RequestFacts): Verdict => {
  const byOrigin = originRefusal(facts)
  if (byOrigin !== undefined) return byOrigin
  const route = facts.route
  const method = methodFor(route)
  if (method !== undefined && facts.method !== method) return refuse(405, `${facts.method} is not allowed here`)
  if (method === undefined && facts.method !== "GET" && facts.method !== "POST")
    return refuse(405, `${facts.method} is not allowed here`)
  // The one-time link is the way in: it carries its own token, checked by the session store.
  if (route._tag === "Open") return { _tag: "Allow", route }
  if (!facts.session) return refuse(401, NO_SESSION_TEXT)
  if (route._tag === "Unknown") return refuse(404, "not found")
  if (route._tag === "Rpc" && !facts.csrf) return refuse(403, "the CSRF header is missing or wrong")
  return { _tag: "Allow", route }
}

/** A flat asset name: letters, digits, dots, dashes and underscores, not starting with a dot. */
export const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/

/** The route a path names. Query strings are not part of the path. */
export const routeOf = (path: string): UiRoute => {
  if (path === "/open") return { _tag: "Open" }
  if (path === "/") return { _tag: "Page" }
  if (path === "/rpc") return { _tag: "Rpc" }
  if (path.startsWith("/assets/")) {
    const name = path.slice("/assets/".length)
    return ASSET_NAME.test(name) ? { _tag: "Asset", name } : { _tag: "Unknown" }
  }
  return { _tag: "Unknown" }
}
