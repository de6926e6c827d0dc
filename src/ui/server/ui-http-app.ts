import { Cookies, type HttpApp, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, type Scope } from "effect"
import { missingPageText, pageWithCsrf, type UiAssets } from "./ui-assets.js"
import { decide, NO_SESSION_TEXT, type RequestFacts, routeOf, type UiRoute } from "./ui-checks.js"
import { sameSecret, type UiSession, UiSessions } from "./ui-sessions.js"

/** The largest protocol request the page may post. */
export const MAX_RPC_BODY_BYTES = 1024 * 1024

/** The header the page sends its session's CSRF token in. */
export const CSRF_HEADER = "x-blctx-csrf"

/** The session cookie: named by port, so two daemons' pages on one machine keep theirs apart. */
export const sessionCookieName = (port: number) => `blctx_ui_${port}`

/**
 * On every answer: the page runs only its own script and style, loads nothing from elsewhere,
 * cannot be framed, and nothing is cached or sniffed. No Access-Control-* header is ever sent.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

export interface UiAppOptions {
  readonly port: number
  /** The daemon's process id, which the page names when the daemon stops answering. */
  readonly daemonPid: number
  readonly assets: UiAssets
  /** The protocol's app (`RpcServer.toHttpApp(UiRpcs)`), once the daemon's handlers exist. */
  readonly rpc: Effect.Effect<Option.Option<HttpApp.Default<never, Scope.Scope>>>
}

const plain = (status: number, body: string) => HttpServerResponse.text(`${body}\n`, { status })

const header = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined => request.headers[name]

/** The path and query of a request target (`/open?token=…`). */
const splitTarget = (url: string) => {
  const at = url.indexOf("?")
  return at === -1
    ? { path: url, query: new URLSearchParams() }
    : { path: url.slice(0, at), query: new URLSearchParams(url.slice(at + 1)) }
}

/** `/open?token=T`: a live token opens a session (cookie) and sends the browser to the page. */
const openSession = (port: number, token: string | null) =>
  Effect.gen(function* () {
    const sessions = yield* UiSessions
    const session = token === null ? Option.none() : yield* sessions.redeem(token)
    if (Option.isNone(session)) return plain(401, `This link is used up or expired: run \`blctx ui\` for a new link.`)
    return HttpServerResponse.empty({
      status: 303,
      headers: {
        location: "/",
        "set-cookie": `${sessionCookieName(port)}=${session.value.id}; HttpOnly; SameSite=Strict; Path=/`
      }
    })
  })

const servePage = (assets: UiAssets, session: UiSession, daemonPid: number) => {
  const index = Option.flatMap(assets.files, (files) => Option.fromNullable(files.get("index.html")))
  if (Option.isNone(index)) return plain(500, missingPageText(assets.folder))
  const html = pageWithCsrf(new TextDecoder().decode(index.value.bytes), session.csrf, daemonPid)
  if (Option.isNone(html)) return plain(500, `The viewer's index.html in ${assets.folder} has no CSRF placeholder.`)
  return HttpServerResponse.text(html.value, { contentType: index.value.contentType })
}

const serveAsset = (assets: UiAssets, name: string) => {
  const asset = Option.flatMap(assets.files, (files) => Option.fromNullable(files.get(name)))
  return Option.match(asset, {
    onNone: () => plain(404, "not found"),
    onSome: (a) => HttpServerResponse.uint8Array(a.bytes, { contentType: a.contentType })
  })
}

/** The body, read once within the bound (the protocol's app reads the same, cached, text). */
const serveRpc = (request: HttpServerRequest.HttpServerRequest, rpc: UiAppOptions["rpc"]) =>
  Effect.gen(function* () {
    const length = Number(header(request, "content-length") ?? "0")
    if (length > MAX_RPC_BODY_BYTES) return plain(413, "the request is larger than 1 MiB")
    const read = yield* Effect.either(
      request.text.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(MAX_RPC_BODY_BYTES)))
    )
    if (read._tag === "Left") return plain(413, "the request is larger than 1 MiB")
    const app = yield* rpc
    if (Option.isNone(app)) return plain(503, "the daemon is starting or stopping; try again")
    return yield* app.value
  })

const answer = (
  request: HttpServerRequest.HttpServerRequest,
  options: UiAppOptions,
  route: UiRoute,
  session: UiSession | undefined,
  query: URLSearchParams
) => {
  switch (route._tag) {
    case "Open":
      return openSession(options.port, query.get("token"))
    case "Page":
      return session === undefined
        ? Effect.succeed(plain(401, NO_SESSION_TEXT))
        : Effect.succeed(servePage(options.assets, session, options.daemonPid))
    case "Asset":
      return Effect.succeed(serveAsset(options.assets, route.name))
    case "Rpc":
      return serveRpc(request, options.rpc)
    case "Unknown":
      return Effect.succeed(plain(404, "not found"))
  }
}

/** The facts `decide` needs: the headers as sent, and what the cookie and CSRF header name. */
const gatherFacts = (request: HttpServerRequest.HttpServerRequest, port: number, route: UiRoute) =>
  Effect.gen(function* () {
    const sessions = yield* UiSessions
    const cookie = Cookies.parseHeader(header(request, "cookie") ?? "")[sessionCookieName(port)]
    const session = cookie === undefined ? Option.none<UiSession>() : yield* sessions.find(cookie)
    const csrf = header(request, CSRF_HEADER)
    const facts: RequestFacts = {
      method: request.method,
      route,
      port,
      host: header(request, "host"),
      origin: header(request, "origin"),
      secFetchSite: header(request, "sec-fetch-site"),
      session: Option.isSome(session),
      csrf: Option.isSome(session) && csrf !== undefined && sameSecret(session.value.csrf, csrf)
    }
    return { facts, session: Option.getOrUndefined(session) }
  })

/**
 * The viewer's HTTP app: every request is judged by `decide` (`ui-checks.ts`) before anything is
 * read or answered, then `/open`, `/`, `/assets/<name>` or `/rpc` answers; the security headers
 * go on every answer, refusals and failures included.
 */
export const makeUiHttpApp = (options: UiAppOptions): HttpApp.Default<never, Scope.Scope | UiSessions> =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { path, query } = splitTarget(request.url)
    const route = routeOf(path)
    const { facts, session } = yield* gatherFacts(request, options.port, route)
    const verdict = decide(facts)
    if (verdict._tag === "Refuse") return plain(verdict.status, verdict.reason)
    return yield* answer(request, options, verdict.route, session, query)
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.logWarning("the viewer could not answer a request", cause).pipe(
        Effect.as(plain(500, "the daemon could not answer this request; see its log"))
      )
    ),
    Effect.map(HttpServerResponse.setHeaders(SECURITY_HEADERS))
  )
