import { describe, expect, it } from "@effect/vitest"
import { candidateMatch, codeForms, contentWords, queryWords } from "./query-terms.js"

describe("query terms", () => {
  it("reads flags with their value, paths, dotted, camelCase and snake_case names as code forms", () => {
    expect(codeForms("the --retries 1 flag")).toEqual([{ literal: "--retries 1", parts: ["retries", "1"] }])
    expect(codeForms("what changed in src/billing/invoice.ts?")).toEqual([
      { literal: "src/billing/invoice.ts", parts: ["src", "billing", "invoice", "ts"] }
    ])
    expect(codeForms("where is parseInstant used")).toEqual([{ literal: "parseinstant", parts: ["parse", "instant"] }])
    expect(codeForms("retry_count")).toEqual([{ literal: "retry_count", parts: ["retry", "count"] }])
    // One word is an ordinary term, not a form.
    expect(codeForms("how do we deploy")).toEqual([])
  })

  it("leaves out conversational words unless nothing else is left", () => {
    expect(contentWords(queryWords("What did we decide about the shop API?"))).toEqual(["decide", "shop", "api"])
    expect(contentWords(queryWords("how do I"))).toEqual(["how", "do", "i"])
    // "What happened…" asks as "what did we do…" does.
    expect(contentWords(queryWords("What happened in infra?"))).toEqual(["infra"])
  })

  it("finds candidates by the words, each form's phrase and its joined spelling, never an FTS syntax error", () => {
    const words = queryWords('retry_count "OR" NEAR(')
    expect(candidateMatch(words, codeForms("retry_count"))).toBe(
      '"retry_count" OR "or" OR "near" OR "retry count" OR "retrycount"'
    )
    expect(candidateMatch([], [])).toBeNull()
  })
})
