import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { SearchRequest } from "../retrieval/contract.js"
import { decodeIssues, describeDecodeError, quoteValue } from "./decode-issues.js"

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
/** A 100,000-character query with a credential near its start, as an agent might paste a log. */
const HUGE_QUERY = `why did ${TOKEN} fail ${"lorem ipsum ".repeat(8_400)}`.slice(0, 100_000)

const failureOf = (schema: Schema.Schema.AnyNoContext, value: unknown) => {
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(value)
  if (Either.isRight(decoded)) throw new Error("expected a decoding failure")
  return decoded.left
}

describe("quoteValue", () => {
  it("quotes a short string whole, redacted", () => {
    expect(quoteValue("abc")).toBe('"abc"')
    expect(quoteValue(`t ${TOKEN}`)).toBe('"t [REDACTED:github_token]" (42 characters)')
  })

  it("quotes at most 40 characters of a long string, redacted, with its length", () => {
    const quoted = quoteValue(HUGE_QUERY)
    expect(quoted.length).toBeLessThan(80)
    expect(quoted).not.toContain("ghp_")
    expect(quoted).toContain("100,000 characters")
  })

  it("describes arrays and objects without quoting them", () => {
    expect(quoteValue([1, 2, 3])).toBe("an array of 3 items")
    expect(quoteValue({ huge: "x".repeat(10_000) })).toBe("an object")
    expect(quoteValue(500)).toBe("500")
    expect(quoteValue(null)).toBe("null")
  })
})

describe("decode issues", () => {
  it("name a 100,000-character query and its 4,000-character bound, short, with no secret", () => {
    const text = describeDecodeError(failureOf(SearchRequest, { query: HUGE_QUERY }))
    expect(text.length).toBeLessThan(200)
    expect(text).toMatch(/^query: /)
    expect(text).toMatch(/at most 4000 character/)
    expect(text).not.toContain("ghp_")
    expect(text).not.toContain("lorem ipsum lorem ipsum lorem ipsum lorem")
  })

  it("quote an unexpected key shortly and redacted", () => {
    const issues = decodeIssues(failureOf(SearchRequest, { query: "x", [`${TOKEN}${"k".repeat(5_000)}`]: 1 }))
    expect(issues).toHaveLength(1)
    const [issue] = issues
    expect(issue?.kind).toBe("unexpected")
    expect(issue?.field.length).toBeLessThan(80)
    expect(issue?.field).not.toContain("ghp_")
  })

  it("quote a plain key that is a credential", () => {
    const [issue] = decodeIssues(failureOf(SearchRequest, { query: "x", [TOKEN]: 1 }))
    expect(issue?.field).toBe('"[REDACTED:github_token]"')
  })

  it("list at most ten problems and count the rest", () => {
    const args = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`extra${i}`, i]))
    const text = describeDecodeError(failureOf(SearchRequest, { query: "x", ...args }))
    expect(text.length).toBeLessThan(1_000)
    expect(text).toContain("and 4,990 more")
  })

  it("keep our own message annotations, and Effect's wording for small values", () => {
    const Absolute = Schema.String.pipe(Schema.filter((p) => p.startsWith("/"), { message: () => "must be absolute" }))
    expect(describeDecodeError(failureOf(Schema.Struct({ root: Absolute }), { root: "rel" }))).toBe(
      "root: must be absolute"
    )
    expect(describeDecodeError(failureOf(SearchRequest, { query: "x", limit: 500 }))).toBe(
      "limit: Expected a number between 1 and 100, actual 500"
    )
    expect(describeDecodeError(failureOf(SearchRequest, {}))).toBe("query: is missing")
    expect(describeDecodeError(failureOf(SearchRequest, 3))).toMatch(/^\(value\): Expected /)
  })
})
