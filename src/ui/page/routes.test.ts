import { describe, expect, it } from "vitest"
import { noteRoute, parseRoute, searchRoute, sessionRoute } from "./routes.js"

describe("page routes", () => {
  it("round-trips ids and words through encodeURIComponent", () => {
    const id = "a/b?c=d&e#f javascript:alert(1)"
    const built = sessionRoute(id, { turn: "3", at: "m12@0-40" })
    expect(built).toMatch(/^#\/session\/[A-Za-z0-9\-._~%!*'()]+\?/)
    expect(built).not.toContain(":")
    expect(parseRoute(built)).toEqual({ view: "session", id, params: { turn: "3", at: "m12@0-40" } })
    expect(parseRoute(noteRoute(id))).toEqual({ view: "note", id, params: {} })
    expect(parseRoute(searchRoute({ q: "<script>", mode: "lexical" }))).toEqual({
      view: "search",
      params: { q: "<script>", mode: "lexical" }
    })
  })

  it("reads an unknown or malformed hash as the landing view", () => {
    for (const hash of ["", "#", "#/", "#/nope", "#/session/", "#/session/%E0%A4%A", "#/notes/a/b"])
      expect(parseRoute(hash)).toEqual({ view: "search", params: {} })
    expect(parseRoute("#/notes").view).toBe("notes")
    expect(parseRoute("#/health").view).toBe("health")
  })
})
