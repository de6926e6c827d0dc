import { describe, expect, it } from "@effect/vitest"
import { EmbeddingUnavailable } from "../embedding/embedding-unavailable.js"
import { type IndexFacts, judgeIndex } from "./index-state.js"

const facts = (over: Partial<IndexFacts>): IndexFacts => ({
  modelUnavailable: null,
  hasMessages: true,
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
    const missing = EmbeddingUnavailable.NotInstalled({ detail: "/m/vocab.txt is missing" })
    expect(judgeIndex(facts({ modelUnavailable: missing }))).toEqual({
      index_state: "model_missing",
      query_mode: "lexical",
      query_mode_reason:
        "the embedding model is not installed: /m/vocab.txt is missing; run `blctx install codex --step embedding_model`"
    })
    expect(judgeIndex(facts({ modelUnavailable: missing, hasMessages: false })).index_state).toBe("empty")
  })
  it("answers lexically, saying what failed, while the model has not passed every check", () => {
    const failed = EmbeddingUnavailable.NotVerified({
      detail: "ranked-retrieval check failed: passage 1 ranked first, expected 0"
    })
    expect(judgeIndex(facts({ modelUnavailable: failed }))).toEqual({
      index_state: "model_missing",
      query_mode: "lexical",
      query_mode_reason:
        "the embedding model has not passed its checks: ranked-retrieval check failed: passage 1 ranked first, expected 0; run `blctx install codex --step embedding_model`"
    })
    // Even with every chunk embedded (by a model verified earlier), nothing is embedded with it now.
    expect(judgeIndex(facts({ modelUnavailable: failed, chunksWithoutVector: 0 })).query_mode).toBe("lexical")
  })
  it("names the other reasons no vectors can be used", () => {
    const reason = (why: EmbeddingUnavailable) => judgeIndex(facts({ modelUnavailable: why })).query_mode_reason
    expect(reason(EmbeddingUnavailable.Unloadable({ detail: "bad graph" }))).toBe(
      "the embedding model could not be loaded: bad graph; run `blctx doctor --step embedding_model`"
    )
    expect(reason(EmbeddingUnavailable.NoVectorIndex({ detail: "refused" }))).toBe(
      "the vector index could not be opened: refused"
    )
    expect(reason(EmbeddingUnavailable.BadConfig({ detail: "c.json: not valid JSON" }))).toBe(
      "the configuration names no usable embedding model: c.json: not valid JSON"
    )
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
