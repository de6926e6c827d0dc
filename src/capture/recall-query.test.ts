import { describe, expect, it } from "vitest"
import { MAX_RECALL_QUERY_CHARS, recallQueryOf } from "./recall-query.js"

describe("recallQueryOf", () => {
  it("skips short prompts, few words and commands", () => {
    for (const prompt of [
      undefined,
      "",
      "yes",
      "ok do it",
      "continue please",
      "/compact the history now",
      "!ls -la in the repo",
      "   "
    ]) {
      expect(recallQueryOf(prompt)).toBeUndefined()
    }
  })

  it("searches a question, trimmed", () => {
    expect(recallQueryOf("  how did we fix the flaky test?  ")).toBe("how did we fix the flaky test?")
  })

  it("cuts a long prompt to the daemon's bound, never inside a surrogate pair", () => {
    expect(recallQueryOf(`a b ${"c".repeat(10_000)}`)).toHaveLength(MAX_RECALL_QUERY_CHARS)
    const emoji = `a b ${"c".repeat(MAX_RECALL_QUERY_CHARS - 5)}😀😀`
    const cut = recallQueryOf(emoji) ?? ""
    expect(cut.length).toBe(MAX_RECALL_QUERY_CHARS - 1)
    expect(cut.endsWith("c")).toBe(true)
  })
})
