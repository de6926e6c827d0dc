import { describe, expect, it } from "@effect/vitest"
import { type IndexFacts, judgeIndex } from "./index-state.js"

const facts = (over: Partial<IndexFacts>): IndexFacts => ({
  modelUnavailable: null,
  messages: 10,
  chunksWithoutVector: 0,
  importActive: false,
  repairActive: false,
  ...over
})

describe("judgeIndex", () => {
  it("is ready and hybrid when every chunk has a vector of the loaded model", () => {
    expect(judgeIndex(facts({}))).toEqual({ index_state: "ready", query_mode: "hybrid", query_mode_reason: null })
  })
  it("answers lexically while a repair runs, saying so", () => {
    const v = judgeIndex(facts({ repairActive: true }))
    expect(v.index_state).toBe("repairing")
    expect(v.query_mode).toBe("lexical")
    expect(v.query_mode_reason).toContain("repair")
  })
  it("answers lexically without a model: model_missing, or empty when nothing is indexed", () => {
    expect(judgeIndex(facts({ modelUnavailable: "not installed" })).index_state).toBe("model_missing")
    expect(judgeIndex(facts({ modelUnavailable: "not installed", messages: 0 })).index_state).toBe("empty")
    expect(judgeIndex(facts({ modelUnavailable: "not installed" })).query_mode_reason).toContain("not installed")
  })
  it("answers lexically when chunks lack vectors of the current fingerprint", () => {
    const v = judgeIndex(facts({ chunksWithoutVector: 3 }))
    expect(v.query_mode).toBe("lexical")
    expect(v.query_mode_reason).toContain("3 chunks")
  })
  it("stays hybrid over what is embedded while an import runs", () => {
    expect(judgeIndex(facts({ importActive: true, chunksWithoutVector: 5 }))).toEqual({
      index_state: "indexing",
      query_mode: "hybrid",
      query_mode_reason: null
    })
  })
})
