import { EmbeddingUnavailable } from "../embedding/embedding-unavailable.js"
import type { IndexState, QueryMode } from "./contract.js"

/** What decides whether the index is ready and whether a search may use vectors. */
export interface IndexFacts {
  /** Why no verified model can be used, or null when one is loaded. */
  readonly modelUnavailable: EmbeddingUnavailable | null
  readonly hasMessages: boolean
  /** Chunks without a vector of the current model's fingerprint. */
  readonly chunksWithoutVector: number
  readonly importActive: boolean
  readonly repairActive: boolean
}

export interface IndexVerdict {
  readonly index_state: IndexState
  readonly query_mode: QueryMode
  /** Why the query mode is lexical; null for hybrid. */
  readonly query_mode_reason: string | null
}

const INSTALL_MODEL = "run `blctx install codex --step embedding_model`"

/** Why search is lexical when nothing can be embedded, with what to run about it. */
export const unavailableReason: (why: EmbeddingUnavailable) => string = EmbeddingUnavailable.$match({
  NotInstalled: ({ detail }) => `the embedding model is not installed: ${detail}; ${INSTALL_MODEL}`,
  NotVerified: ({ detail }) => `the embedding model has not passed its checks: ${detail}; ${INSTALL_MODEL}`,
  Unloadable: ({ detail }) =>
    `the embedding model could not be loaded: ${detail}; run \`blctx doctor --step embedding_model\``,
  BadConfig: ({ detail }) => `the configuration names no usable embedding model: ${detail}`,
  NoVectorIndex: ({ detail }) => `the vector index could not be opened: ${detail}`
})

/**
 * Search is hybrid only when every chunk has a vector of the loaded model: no model (or one that
 * has not passed every check of the embedding_model step), a running repair, or chunks without
 * vectors (pending, or of another fingerprint) make it lexical, and the reason says which. An import in progress still allows hybrid search over what is embedded.
 */
export const judgeIndex = (facts: IndexFacts): IndexVerdict => {
  const lexical = (index_state: IndexState, reason: string): IndexVerdict => ({
    index_state,
    query_mode: "lexical",
    query_mode_reason: reason
  })
  if (facts.repairActive)
    return lexical("repairing", "a repair job is rebuilding vectors; answering lexically until it finishes")
  if (facts.modelUnavailable !== null) {
    return lexical(facts.hasMessages ? "model_missing" : "empty", unavailableReason(facts.modelUnavailable))
  }
  if (!facts.hasMessages) {
    return facts.importActive
      ? lexical("indexing", "nothing is indexed yet; an import is running")
      : lexical("empty", "nothing is indexed yet")
  }
  if (facts.chunksWithoutVector > 0 && !facts.importActive) {
    return lexical(
      "repairing",
      `${facts.chunksWithoutVector} chunks have no vector of the current model; a repair job will embed them`
    )
  }
  return {
    index_state: facts.importActive ? "indexing" : "ready",
    query_mode: "hybrid",
    query_mode_reason: null
  }
}
