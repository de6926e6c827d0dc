import { describe, expect, it } from "vitest"
import { fastSearchSchema } from "./fast-search-derive.js"
import { SEARCH_ANSWER_SCHEMA, SEARCH_OPTION_ROWS } from "./fast-search-schema.js"

describe("the search fast path's copy of the search schemas", () => {
  it("is what SearchResponse and blctx search's options give (else: node scripts/generate-fast-search-schema.mjs)", () => {
    expect({ answer: SEARCH_ANSWER_SCHEMA, options: SEARCH_OPTION_ROWS }).toEqual(fastSearchSchema())
  })

  it("reads the options the full CLI derives: bounds with their defaults, and the known choices", () => {
    expect(SEARCH_OPTION_ROWS.map((row) => row.option)).toEqual([
      "--limit",
      "--offset",
      "--project",
      "--session",
      "--since",
      "--until",
      "--source-type",
      "--agent"
    ])
    expect(SEARCH_OPTION_ROWS[0]).toEqual({
      option: "--limit",
      path: ["limit"],
      bound: { min: 1, max: 100, fallback: 10 }
    })
    expect(SEARCH_OPTION_ROWS.at(-1)).toEqual({
      option: "--agent",
      path: ["filters", "agent"],
      choices: ["codex", "claude", "gemini"]
    })
  })
})
