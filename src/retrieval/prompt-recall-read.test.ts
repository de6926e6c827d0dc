import { describe, expect, it } from "vitest"
import { meaningfulTerms, termShare } from "./prompt-recall-read.js"

describe("the lexical relevance of a recalled hit", () => {
  it("counts the prompt's distinct meaningful terms: lowercased, three characters or more, no stopwords", () => {
    expect([...meaningfulTerms("Please fix THE failing date test, the date test in the UI!")]).toEqual([
      "fix",
      "failing",
      "date",
      "test"
    ])
    expect(meaningfulTerms("what is it, and how?").size).toBe(0)
  })

  it("is the share of those terms the hit's text holds as words, 0 without terms", () => {
    const terms = meaningfulTerms("fix the failing date test in the parser")
    expect(termShare(terms, "Fix the failing date test.")).toBe(0.8)
    expect(termShare(terms, "The tests pass")).toBe(0)
    expect(termShare(new Set(), "anything")).toBe(0)
  })
})
