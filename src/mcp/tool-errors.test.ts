import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { SearchRequest } from "../retrieval/contract.js"
import { InvalidQuery } from "../retrieval/invalid-query.js"
import { DaemonStoreError, daemonBusy } from "../rpc/errors.js"
import { InstallationUnusable } from "./installation-check.js"
import { daemonDown } from "./mcp-fixtures.test-support.js"
import { argumentIssues, errorDocument, errorResult, InvalidArguments, internalErrorDocument } from "./tool-errors.js"

const issuesOf = (args: unknown) => {
  const decoded = Schema.decodeUnknownEither(SearchRequest, { errors: "all", onExcessProperty: "error" })(args)
  if (Either.isRight(decoded)) throw new Error("expected a decoding failure")
  return argumentIssues(decoded.left)
}

describe("argument issues", () => {
  it("name each field by its path, once, with what is wrong", () => {
    expect(issuesOf({ query: "x", limit: 500, filters: { since: 3 }, verbose: true })).toEqual([
      { field: "verbose", problem: "is not an argument of this tool" },
      { field: "filters.since", problem: "Expected string, actual 3" },
      { field: "limit", problem: "Expected a number between 1 and 100, actual 500" }
    ])
    expect(issuesOf({})).toEqual([{ field: "query", problem: "is missing" }])
    expect(issuesOf([])[0]?.field).toBe("(arguments)")
  })
})

describe("error documents", () => {
  const kindOf = (failure: Parameters<typeof errorDocument>[1]) => errorDocument("search", failure).error.kind

  it("give each failure a kind an agent can branch on, with the remediation", () => {
    expect(kindOf(new InvalidArguments({ tool: "search", issues: [{ field: "limit", problem: "too big" }] }))).toBe(
      "invalid_arguments"
    )
    expect(kindOf(new InvalidQuery({ reason: "no result has context id m9", remediation: "Use a context_id" }))).toBe(
      "invalid_query"
    )
    expect(kindOf(daemonDown)).toBe("daemon_unavailable")
    expect(
      kindOf(new InstallationUnusable({ kind: "installation_mismatch", reason: "r", remediation: "Run: x" }))
    ).toBe("installation_mismatch")
    expect(
      kindOf(new DaemonStoreError({ path: "/db", reason: "disk I/O error", remediation: "Run: blctx doctor" }))
    ).toBe("store_error")
    expect(errorDocument("search", daemonDown).error).toMatchObject({
      message: expect.stringContaining("not running"),
      remediation: "Run: blctx install codex"
    })
    expect(internalErrorDocument("search", "boom").error.kind).toBe("internal_error")
  })

  it("tell a busy daemon (retry in a moment) apart from an unavailable one", () => {
    expect(errorDocument("search", daemonBusy(32, 32)).error).toMatchObject({
      kind: "daemon_busy",
      message: expect.stringContaining("busy"),
      remediation: expect.stringContaining("Retry in a moment")
    })
  })

  it("travel as isError with the document as JSON text, and no structured content", () => {
    const result = errorResult(errorDocument("search", daemonDown))
    expect(result.isError).toBe(true)
    expect(result).not.toHaveProperty("structuredContent")
    const [block] = result.content
    expect(block?.type).toBe("text")
    expect(JSON.parse(block?.type === "text" ? block.text : "")).toEqual(errorDocument("search", daemonDown))
  })

  it("escape terminal controls in the text while keeping the same JSON value", () => {
    const hostile = new InvalidQuery({ reason: "bad \u001b]0;title\u0007 \u009b31m", remediation: "r" })
    const [block] = errorResult(errorDocument("context", hostile)).content
    const text = block?.type === "text" ? block.text : ""
    const controls = [...text].filter(
      (c) => c.charCodeAt(0) < 0x20 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f)
    )
    expect(controls).toEqual([])
    expect(JSON.parse(text).error.message).toBe(hostile.reason)
  })
})

describe("an oversized argument", () => {
  it("is refused in a short error naming the argument and its bound, holding no secret", () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
    const query = `why did ${token} fail ${"lorem ipsum ".repeat(8_400)}`.slice(0, 100_000)
    const issues = issuesOf({ query })
    const failure = new InvalidArguments({ tool: "search", issues })
    const [block] = errorResult(errorDocument("search", failure)).content
    const text = block?.type === "text" ? block.text : ""
    expect(text.length).toBeLessThan(600)
    expect(text).not.toContain("ghp_")
    expect(issues).toEqual([{ field: "query", problem: expect.stringContaining("at most 4000 character") }])
  })
})
