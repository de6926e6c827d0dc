import { describe, expect, it } from "@effect/vitest"
import { decide, NO_SESSION_TEXT, type RequestFacts, routeOf } from "./ui-checks.js"

const PORT = 41234

/** A request the page itself makes: its own Host and Origin, a live session, the right CSRF token. */
const fromPage = (facts: Partial<RequestFacts> = {}): RequestFacts => ({
  method: "GET",
  route: { _tag: "Page" },
  port: PORT,
  host: `127.0.0.1:${PORT}`,
  origin: undefined,
  secFetchSite: "same-origin",
  session: true,
  csrf: true,
  ...facts
})

const rpc = (facts: Partial<RequestFacts> = {}) =>
  fromPage({ method: "POST", route: { _tag: "Rpc" }, origin: `http://127.0.0.1:${PORT}`, ...facts })

const status = (facts: RequestFacts) => {
  const verdict = decide(facts)
  return verdict._tag === "Allow" ? "allow" : verdict.status
}

describe("the viewer's refusals", () => {
  it("allows the page's own requests: the page, an asset, the protocol, the one-time link", () => {
    expect(status(fromPage())).toBe("allow")
    expect(status(fromPage({ route: { _tag: "Asset", name: "app.js" } }))).toBe("allow")
    expect(status(rpc())).toBe("allow")
    // The link is followed from a terminal: no session yet, no Origin, Sec-Fetch-Site none.
    expect(status(fromPage({ route: { _tag: "Open" }, session: false, csrf: false, secFetchSite: "none" }))).toBe(
      "allow"
    )
  })

  it("refuses a Host other than exactly 127.0.0.1:<port> (DNS rebinding), on every path", () => {
    for (const host of [`evil.example:${PORT}`, `localhost:${PORT}`, "127.0.0.1", "127.0.0.1:1", undefined]) {
      expect(status(fromPage({ host }))).toBe(403)
      expect(status(rpc({ host }))).toBe(403)
      expect(status(fromPage({ host, route: { _tag: "Open" } }))).toBe(403)
    }
  })

  it("refuses a foreign Origin, a cross-site request, and a POST without Origin", () => {
    for (const origin of ["http://evil.example", `http://localhost:${PORT}`, "null", `https://127.0.0.1:${PORT}`]) {
      expect(status(fromPage({ origin }))).toBe(403)
      expect(status(rpc({ origin }))).toBe(403)
    }
    expect(status(fromPage({ secFetchSite: "cross-site" }))).toBe(403)
    expect(status(fromPage({ secFetchSite: "cross-site", route: { _tag: "Open" } }))).toBe(403)
    expect(status(rpc({ origin: undefined }))).toBe(403)
    // Same-site (another port of the loopback address) is not cross-site; the Origin check covers it.
    expect(status(fromPage({ secFetchSite: "same-site" }))).toBe("allow")
  })

  it("refuses without a session (401, saying how to get one), and a POST without the CSRF token (403)", () => {
    const refused = decide(fromPage({ session: false }))
    expect(refused).toEqual({ _tag: "Refuse", status: 401, reason: NO_SESSION_TEXT })
    expect(NO_SESSION_TEXT).toContain("run `blctx ui` for a new link")
    expect(status(fromPage({ session: false, route: { _tag: "Asset", name: "app.js" } }))).toBe(401)
    expect(status(rpc({ session: false }))).toBe(401)
    expect(status(fromPage({ session: false, route: { _tag: "Unknown" } }))).toBe(401)
    expect(status(rpc({ csrf: false }))).toBe(403)
  })

  it("refuses OPTIONS and other methods (405), and a method a route does not take", () => {
    for (const method of ["OPTIONS", "PUT", "DELETE", "PATCH", "HEAD", "TRACE"]) {
      expect(status(fromPage({ method }))).toBe(405)
      expect(status(rpc({ method }))).toBe(405)
      expect(status(fromPage({ method, route: { _tag: "Unknown" } }))).toBe(405)
    }
    expect(status(rpc({ method: "GET" }))).toBe(405)
    expect(status(fromPage({ method: "POST", origin: `http://127.0.0.1:${PORT}` }))).toBe(405)
  })

  it("answers 404 for an unknown path only to a known session", () => {
    expect(status(fromPage({ route: { _tag: "Unknown" } }))).toBe(404)
  })
})

describe("routes", () => {
  it("names the four places, and only flat asset names", () => {
    expect(routeOf("/")).toEqual({ _tag: "Page" })
    expect(routeOf("/open")).toEqual({ _tag: "Open" })
    expect(routeOf("/rpc")).toEqual({ _tag: "Rpc" })
    expect(routeOf("/assets/app.js")).toEqual({ _tag: "Asset", name: "app.js" })
    for (const path of [
      "/assets/../index.html",
      "/assets/.hidden",
      "/assets/a/b.js",
      "/assets/",
      "/index.html",
      "//x"
    ]) {
      expect(routeOf(path)).toEqual({ _tag: "Unknown" })
    }
  })
})
