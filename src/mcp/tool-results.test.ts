import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { SearchResponse } from "../retrieval/contract.js"
import {
  contextMessage,
  contextResponse,
  hit,
  note,
  recentResponse,
  searchResponse
} from "./mcp-fixtures.test-support.js"
import {
  McpContextResponse,
  McpRecentResponse,
  McpSearchResponse,
  toMcpContext,
  toMcpRecent,
  toMcpSearch
} from "./tool-results.js"

describe("MCP results", () => {
  it("names a transcript's session source_session_id and an authored update's context_session_id", () => {
    const mapped = toMcpSearch(
      searchResponse([
        hit(),
        hit({ context_id: "c13", source_type: "authored_update", session_id: "ctx-1", source: note })
      ])
    )
    const [transcript, authored] = mapped.results
    expect(transcript).toMatchObject({
      source_type: "codex_transcript",
      source_session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
    })
    expect(transcript).not.toHaveProperty("context_session_id")
    expect(authored).toMatchObject({ source_type: "authored_update", context_session_id: "ctx-1" })
    expect(authored).not.toHaveProperty("source_session_id")
    for (const result of mapped.results) expect(result).not.toHaveProperty("session_id")
  })

  it("treats every other source type as a transcript, and keeps a missing session id as null", () => {
    const mapped = toMcpSearch(searchResponse([hit({ source_type: "claude_transcript", session_id: null })]))
    expect(mapped.results[0]).toMatchObject({ source_type: "claude_transcript", source_session_id: null })
  })

  it("keeps every other field of the daemon's answer, in the daemon's order", () => {
    const response = searchResponse([hit()])
    const encoded = Schema.encodeSync(McpSearchResponse)(toMcpSearch(response))
    const original = Schema.encodeSync(SearchResponse)(response)
    const { results, ...rest } = encoded
    const { results: originalResults, ...originalRest } = original
    expect(rest).toEqual(originalRest)
    const { session_id, ...hitRest } = originalResults[0] as (typeof originalResults)[number]
    expect(results).toEqual([{ ...hitRest, source_session_id: session_id }])
    // The renamed key takes session_id's place, so the JSON reads as the daemon's does.
    expect(Object.keys(results[0] ?? {})).toEqual(
      Object.keys(originalResults[0] ?? {}).map((k) => (k === "session_id" ? "source_session_id" : k))
    )
  })

  it("maps recent turns and context pages the same way", () => {
    const recent = Schema.encodeSync(McpRecentResponse)(toMcpRecent(recentResponse))
    expect(recent.turns[0]).toMatchObject({ source_session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000" })
    expect(recent.turns[0]).not.toHaveProperty("session_id")

    const transcript = Schema.encodeSync(McpContextResponse)(
      toMcpContext(contextResponse([contextMessage("codex_transcript")]), "codex_transcript")
    )
    expect(transcript).toMatchObject({ source_session_id: "session-x" })
    const authored = Schema.encodeSync(McpContextResponse)(
      toMcpContext(contextResponse([contextMessage("authored_update")], "ctx-9"), "authored_update")
    )
    expect(authored).toMatchObject({ context_session_id: "ctx-9" })
    expect(authored).not.toHaveProperty("session_id")
  })
})
