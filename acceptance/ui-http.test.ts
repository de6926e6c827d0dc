import * as Fs from "node:fs"
import * as Http from "node:http"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeCodexSession } from "../src/forget/forget-fixtures.test-support.js"
import { UiRpcs } from "../src/rpc/ui-protocol.js"
import { type DaemonHome, isAlive, makeDaemonHome, waitFor } from "./support/daemon-harness.js"

// `blctx ui` over HTTP, as a browser or a hostile page would speak to it: the real CLI and daemon
// in one isolated home (every case only reads, or opens sessions of its own), requests sent with
// node:http so Host, Origin and Sec-Fetch-Site can be forged. The held daemon serves a page of the
// test's own (`<state home>/blctx/test-ui/`), so these tests do not depend on the page's build.

const root = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")
const builtClient = NodePath.join(root, "dist", "src", "rpc", "client.js")

const MARK = "Zqviewermark7731"
const SESSION = "0199d000-0000-7000-8000-0000000000a1"
const INDEX_HTML =
  '<!doctype html><html><head><meta name="blctx-csrf" content=""><link rel="stylesheet" href="/assets/app.css"><script src="/assets/app.js" defer></script></head><body></body></html>'

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
}

interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

interface Link {
  readonly url: string
  readonly port: number
  readonly expires_at: string
}

let home: DaemonHome
let link: Link
/** Every answer any case received: each must carry the security headers and no CORS header. */
const answers: Array<Answer> = []

/** One request to the viewer, with exactly the headers given (Host too: none is added). */
const send = (
  path: string,
  options: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}
) =>
  new Promise<Answer>((resolve, reject) => {
    const request = Http.request(
      {
        host: "127.0.0.1",
        port: link.port,
        path,
        method: options.method ?? "GET",
        setHost: false,
        headers: { host: `127.0.0.1:${link.port}`, ...options.headers },
        agent: false
      },
      (response) => {
        let body = ""
        response.setEncoding("utf8").on("data", (d: string) => {
          body += d
        })
        response.on("end", () => {
          const answer = { status: response.statusCode ?? 0, headers: response.headers, body }
          answers.push(answer)
          resolve(answer)
        })
      }
    )
    request.on("error", reject)
    request.end(options.body)
  })

const origin = () => `http://127.0.0.1:${link.port}`
const cookieName = () => `blctx_ui_${link.port}`

/** Follows a one-time link: the session cookie (name=value) it set, or the refusal. */
const openLink = async (url: string, headers: Record<string, string> = {}) => {
  const answer = await send(new URL(url).pathname + new URL(url).search, { headers })
  const cookie = String(answer.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? ""
  return { answer, cookie }
}

/** A new one-time link, through the protocol (the CLI's `ui` is covered too; a CLI start costs seconds on CI). */
const mintLink = async () => {
  const { connect } = (await import(builtClient)) as typeof import("../src/rpc/client.js")
  return Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(connect({ socketPath: home.socketPath, timeout: "60 seconds" }), (client) => client.OpenUi({}))
    )
  )
}

/** A session as the page has it: its cookie and the CSRF token `/` filled in. */
const newSession = async () => {
  const { cookie } = await openLink((await mintLink()).url)
  const page = await send("/", { headers: { cookie } })
  const csrf = /<meta name="blctx-csrf" content="([^"]*)"/.exec(page.body)?.[1] ?? ""
  return { cookie, csrf }
}

const searchBody = (query: string) =>
  JSON.stringify({ _tag: "Request", id: "1", tag: "Search", payload: { query, limit: 5 }, headers: [] })

/** Whether something listens on `port` at this address, per the kernel's table (LISTEN is 0A). */
const listensOn = (port: number) => {
  const hex = port.toString(16).toUpperCase().padStart(4, "0")
  const rows = ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((table) =>
    Fs.existsSync(table) ? Fs.readFileSync(table, "utf8").split("\n").slice(1) : []
  )
  return rows
    .map((row) => row.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(`:${hex}`) === true && cols[3] === "0A")
    .map((cols) => cols[1]?.split(":")[0])
}

beforeAll(async () => {
  home = makeDaemonHome("detached", { heldDaemon: true })
  const page = NodePath.join(home.stateDir, "test-ui")
  Fs.mkdirSync(page, { recursive: true, mode: 0o700 })
  Fs.writeFileSync(NodePath.join(page, "index.html"), INDEX_HTML)
  Fs.writeFileSync(NodePath.join(page, "app.js"), "document.body.dataset.ready = '1'\n")
  Fs.writeFileSync(NodePath.join(page, "app.css"), "body { margin: 0 }\n")
  Fs.mkdirSync(NodePath.join(page, "nested"))
  Fs.writeFileSync(NodePath.join(page, "nested", "secret.js"), "not served\n")
  Fs.writeFileSync(NodePath.join(page, "notes.sh"), "not served either\n")
  Fs.writeFileSync(NodePath.join(home.home, "outside.js"), "not served: outside the page's folder\n")
  Fs.symlinkSync(NodePath.join(home.home, "outside.js"), NodePath.join(page, "link.js"))
  const install = await home.blctx(["install", "codex", "--step", "service_health", "--json"])
  expect(install.code, install.stdout + install.stderr).toBe(0)
  const file = writeCodexSession(home.codexHome, SESSION, "/home/dev/viewer", [
    { prompt: `Where is ${MARK} kept?`, answer: `${MARK} lives in the vault.`, at: "2026-03-01T10:00:00Z" }
  ])
  const indexed = await home.blctx(["index", file, "--wait", "--json"])
  expect(indexed.code, indexed.stdout + indexed.stderr).toBe(0)
  const ui = await home.blctx(["ui", "--no-open"])
  expect(ui.code, ui.stdout + ui.stderr).toBe(0)
  link = JSON.parse(ui.stdout) as Link
}, 180_000)

afterAll(() => home?.dispose())

describe("blctx ui over HTTP", () => {
  it("prints a one-time link on the loopback address, valid ten minutes", () => {
    expect(Object.keys(link).sort()).toEqual(["expires_at", "port", "url"])
    expect(link.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${link.port}/open\\?token=[A-Za-z0-9_-]{43}$`))
    const minutes = (Date.parse(link.expires_at) - Date.now()) / 60_000
    expect(minutes).toBeGreaterThan(8)
    expect(minutes).toBeLessThanOrEqual(10)
  })

  it("opens a session once from the link: 303 to / with an HttpOnly, SameSite=Strict cookie; used, bogus or missing tokens get 401", async () => {
    const opened = await send(new URL(link.url).pathname + new URL(link.url).search)
    expect(opened.status).toBe(303)
    expect(opened.headers.location).toBe("/")
    expect(opened.headers["set-cookie"]).toHaveLength(1)
    expect(opened.headers["set-cookie"]?.[0]).toMatch(
      new RegExp(`^${cookieName()}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`)
    )
    const [used, bogus, none, empty] = await Promise.all([
      send(new URL(link.url).pathname + new URL(link.url).search),
      send("/open?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      send("/open"),
      send("/open?token=")
    ])
    for (const refused of [used, bogus, none, empty]) {
      expect(refused.status).toBe(401)
      expect(refused.headers["set-cookie"]).toBeUndefined()
      expect(refused.body).toContain("run `blctx ui` for a new link")
    }
  })

  it("refuses without a session (401) or with an unknown one, on the page, its assets and the protocol", async () => {
    const unknown = `${cookieName()}=${"B".repeat(43)}`
    const refused = await Promise.all([
      send("/"),
      send("/assets/app.js"),
      send("/rpc", { method: "POST", headers: { origin: origin() }, body: searchBody(MARK) }),
      send("/", { headers: { cookie: unknown } }),
      send("/rpc", { method: "POST", headers: { origin: origin(), cookie: unknown }, body: searchBody(MARK) })
    ])
    for (const answer of refused) {
      expect(answer.status).toBe(401)
      expect(answer.headers["content-type"]).toMatch(/^text\/plain/)
      expect(answer.body).toContain("run `blctx ui` for a new link")
      expect(answer.body).not.toContain(MARK)
    }
  })

  it("serves the page with its session's CSRF token and the daemon's PID, and only the asset folder's flat files with their types", async () => {
    const { cookie, csrf } = await newSession()
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const [page, js, css, missing, nested, unlisted, linked, traversal, encoded] = await Promise.all(
      ["/", "/assets/app.js", "/assets/app.css", "/assets/none.js", "/assets/nested/secret.js", "/assets/notes.sh"]
        .concat(["/assets/link.js", "/assets/../index.html", "/assets/%2e%2e%2findex.html"])
        .map((path) => send(path, { headers: { cookie } }))
    )
    expect(page?.status).toBe(200)
    expect(page?.headers["content-type"]).toBe("text/html; charset=utf-8")
    const [daemon] = home.daemonPids()
    expect(page?.body).toBe(INDEX_HTML.replace('content=""', `content="${csrf}" data-daemon-pid="${daemon}"`))
    expect(js?.status).toBe(200)
    expect(js?.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(js?.body).toBe("document.body.dataset.ready = '1'\n")
    expect(css?.headers["content-type"]).toBe("text/css; charset=utf-8")
    for (const refused of [missing, nested, unlisted, linked, traversal, encoded]) {
      expect(refused?.status).toBe(404)
      expect(refused?.body).not.toContain("served")
    }
    // Each session has its own CSRF token.
    expect((await newSession()).csrf).not.toBe(csrf)
  })

  it("refuses a foreign Host (DNS rebinding) before anything else, even with a live link or session", async () => {
    const { cookie, csrf } = await newSession()
    const ui = await home.blctx(["ui", "--no-open"])
    const fresh = JSON.parse(ui.stdout) as Link
    const target = new URL(fresh.url).pathname + new URL(fresh.url).search
    for (const host of [`evil.example:${link.port}`, `localhost:${link.port}`, "127.0.0.1"]) {
      const refused = await Promise.all([
        send(target, { headers: { host } }),
        send("/", { headers: { host, cookie } }),
        send("/rpc", {
          method: "POST",
          headers: { host, cookie, origin: origin(), "x-blctx-csrf": csrf },
          body: searchBody(MARK)
        })
      ])
      expect(refused.map((a) => a.status)).toEqual([403, 403, 403])
      for (const answer of refused) expect(answer.body).not.toContain(MARK)
    }
    // The refused link was not used up: refusals come before the token is looked at.
    expect((await openLink(fresh.url)).answer.status).toBe(303)
  })

  it("refuses a foreign Origin and cross-site requests (403)", async () => {
    const { cookie, csrf } = await newSession()
    const post = (headers: Record<string, string>) =>
      send("/rpc", { method: "POST", headers: { cookie, "x-blctx-csrf": csrf, ...headers }, body: searchBody(MARK) })
    const refused = await Promise.all([
      send("/", { headers: { cookie, origin: "http://evil.example" } }),
      send("/", { headers: { cookie, "sec-fetch-site": "cross-site" } }),
      post({ origin: "http://evil.example" }),
      post({ origin: `http://localhost:${link.port}` }),
      post({ origin: "null" }),
      post({ origin: origin(), "sec-fetch-site": "cross-site" })
    ])
    expect(refused.map((a) => a.status)).toEqual([403, 403, 403, 403, 403, 403])
    for (const answer of refused) expect(answer.body).not.toContain(MARK)
  })

  it("answers POST /rpc only with the session's CSRF token and its Origin: then a real Search through the daemon's handlers", async () => {
    const { cookie, csrf } = await newSession()
    const other = await newSession()
    const post = (headers: Record<string, string>, body = searchBody(MARK)) =>
      send("/rpc", { method: "POST", headers: { cookie, "content-type": "application/json", ...headers }, body })
    const [noCsrf, wrongCsrf, othersCsrf, noOrigin, answered, tooLarge] = await Promise.all([
      post({ origin: origin() }),
      post({ origin: origin(), "x-blctx-csrf": "C".repeat(43) }),
      post({ origin: origin(), "x-blctx-csrf": other.csrf }),
      post({ "x-blctx-csrf": csrf }),
      post({ origin: origin(), "x-blctx-csrf": csrf, "sec-fetch-site": "same-origin" }),
      post({ origin: origin(), "x-blctx-csrf": csrf }, " ".repeat(1024 * 1024 + 1))
    ])
    expect([noCsrf, wrongCsrf, othersCsrf, noOrigin].map((a) => a.status)).toEqual([403, 403, 403, 403])
    for (const answer of [noCsrf, wrongCsrf, othersCsrf, noOrigin]) expect(answer.body).not.toContain(MARK)
    expect(answered.status, answered.body).toBe(200)
    expect(answered.headers["content-type"]).toMatch(/^application\/json/)
    const [exit] = JSON.parse(answered.body) as Array<{
      _tag: string
      exit: { _tag: string; value: { results: Array<{ text: string; session_id: string }> } }
    }>
    expect(exit?._tag).toBe("Exit")
    expect(exit?.exit._tag).toBe("Success")
    expect(exit?.exit.value.results.some((hit) => hit.text.includes(MARK))).toBe(true)
    expect(tooLarge.status).toBe(413)
  })

  it("answers the page's own client: RpcClient.make(UiRpcs) over HTTP with JSON and the CSRF header", async () => {
    const { cookie, csrf } = await newSession()
    // A browser adds the cookie and Origin itself; here they are set by hand.
    const protocol = RpcClient.layerProtocolHttp({
      url: `${origin()}/rpc`,
      transformClient: HttpClient.mapRequest(
        HttpClientRequest.setHeaders({ cookie, origin: origin(), "x-blctx-csrf": csrf })
      )
    }).pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, RpcSerialization.layerJson)))
    const [found, status] = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(RpcClient.make(UiRpcs), (client) =>
          Effect.all([client.Search({ query: MARK }), client.ContextStatus()])
        )
      ).pipe(Effect.provide(protocol))
    )
    expect(found.results.some((hit) => hit.text.includes(MARK))).toBe(true)
    expect(status).toBeDefined()
  })

  it("refuses OPTIONS and other methods (405), a GET of the protocol and a POST of the page", async () => {
    const { cookie } = await newSession()
    const preflight = {
      cookie,
      origin: origin(),
      "access-control-request-method": "POST",
      "access-control-request-headers": "x-blctx-csrf"
    }
    const answered = await Promise.all([
      send("/rpc", { method: "OPTIONS", headers: preflight }),
      send("/", { method: "OPTIONS", headers: { cookie } }),
      send("/", { method: "PUT", headers: { cookie, origin: origin() } }),
      send("/assets/app.js", { method: "DELETE", headers: { cookie, origin: origin() } }),
      send("/rpc", { headers: { cookie } }),
      send("/", { method: "POST", headers: { cookie, origin: origin() } })
    ])
    expect(answered.map((a) => a.status)).toEqual([405, 405, 405, 405, 405, 405])
  })

  it("a second blctx ui reuses the listener and its port; another port is refused, naming the running page", async () => {
    const other = link.port === 65535 ? link.port - 1 : link.port + 1
    const [again, elsewhere] = await Promise.all([
      home.blctx(["ui", "--no-open"]),
      home.blctx(["ui", "--no-open", "--port", String(other)])
    ])
    expect(again.code, again.stderr).toBe(0)
    const second = JSON.parse(again.stdout) as Link
    expect(second.port).toBe(link.port)
    expect(second.url).not.toBe(link.url)
    expect(elsewhere.code).toBe(1)
    const error = (JSON.parse(elsewhere.stdout) as { error: { _tag: string; message: string } }).error
    expect(error._tag).toBe("UiAlreadyServing")
    expect(error.message).toContain(`http://127.0.0.1:${link.port}/`)
    expect(elsewhere.stderr).toContain(`http://127.0.0.1:${link.port}/`)
  })

  it("listens on 127.0.0.1 only, not on every address", () => {
    expect(listensOn(link.port)).toEqual(["0100007F"])
  })

  it("puts the security headers on every answer, refusals included, and never a CORS header", () => {
    expect(answers.length).toBeGreaterThan(40)
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 303, 401, 403, 404, 405, 413]))
    for (const answer of answers) {
      expect(answer.headers, `${answer.status} ${answer.body}`).toMatchObject(SECURITY_HEADERS)
      expect(Object.keys(answer.headers).filter((h) => h.startsWith("access-control-"))).toEqual([])
    }
  })

  it("closes the listener when the daemon stops; blctx ui then starts the daemon, and the page, anew", async () => {
    const [pid] = home.daemonPids()
    expect(pid).toBeDefined()
    process.kill(pid as number, "SIGTERM")
    await waitFor("the daemon to stop", () => (isAlive(pid as number) ? undefined : true), 30_000)
    expect(listensOn(link.port)).toEqual([])
    const ui = await home.blctx(["ui", "--no-open"])
    expect(ui.code, ui.stdout + ui.stderr).toBe(0)
    link = JSON.parse(ui.stdout) as Link
    expect(home.daemonPids()).not.toContain(pid)
    expect((await openLink(link.url)).answer.status).toBe(303)
  })
})
