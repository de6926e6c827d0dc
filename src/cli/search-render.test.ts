import { describe, expect, it } from "vitest"
import type { SearchResponse } from "../retrieval/contract.js"
import { ansiStyle, plainStyle } from "../terminal/style.js"
import { renderSearch } from "./search-render.js"

type Hit = SearchResponse["results"][number]

const transcriptHit = (over: Partial<Hit> = {}): Hit =>
  ({
    context_id: "c2",
    text: "We decided to deploy the shop API with a blue-green rollout behind the load balancer, switching traffic only after the health checks pass, and to keep the previous release warm for a quick switch back.",
    text_truncated: false,
    source_type: "codex_transcript",
    agent: "codex",
    session_id: "0199a000-0000-7000-8000-000000000000",
    turn_id: "0199a001-0000-7000-9000-000000000001",
    turn_number: 1,
    role: "assistant",
    kind: "final_answer",
    project: "/home/dev/projects/shop-api-with-a-rather-long-directory-name",
    timestamp: "2026-02-02T09:01:59.000Z",
    source: {
      kind: "transcript_span",
      agent: "codex",
      path: "/home/dev/.codex/sessions/2026/02/02/rollout-2026-02-02T09-00-00-0199a000-0000-7000-8000-000000000000.jsonl",
      line: 7,
      byte_start: 1064,
      byte_end: 1332
    },
    chunk: { ordinal: 0, char_start: 0, char_end: 199 },
    score: { kind: "fused", value: 0.031_536_388_140_161_73 },
    ...over
  }) as Hit

const answer = (results: ReadonlyArray<Hit>, over: Partial<SearchResponse> = {}): SearchResponse =>
  ({
    query: "blue-green rollout",
    query_mode: "lexical",
    query_mode_reason:
      "the embedding model is not installed: /home/dev/.cache/blctx/models/Qdrant--bge-small-en--e42255a3e551366f/model_optimized.onnx is missing; run `blctx install codex --step embedding_model`",
    results,
    offset: 0,
    limit: 10,
    next_offset: 10,
    truncated: false,
    returned_chars: 300,
    ...over
  }) as SearchResponse

const noteHit = transcriptHit({
  context_id: "m35",
  source_type: "authored_update",
  text: "Deploys go through the blue-green rollout.",
  source: { kind: "note_revision", note_id: "n-1f2e", revision: 2, revisions: 2 },
  score: { kind: "bm25", value: -2.371_828_5 }
})

/** Every run of non-space characters of the unwrapped rendering: what must never be split. */
const tokensOf = (text: string) => text.split(/\s+/).filter((t) => t !== "")

describe("search results for people", () => {
  it("shows a BM25 score as a positive relevance, higher for a better match", () => {
    const text = renderSearch(answer([noteHit]), plainStyle)
    expect(text).not.toMatch(/-2\.37/)
    expect(text).toContain("relevance 2.37 (bm25)")
  })

  it("names the CLI command that lists a note's older revisions, not the MCP tool", () => {
    const text = renderSearch(answer([noteHit]), plainStyle)
    expect(text).not.toContain("note_history")
    expect(text).toContain("note n-1f2e revision 2 (1 older: blctx notes history n-1f2e)")
  })

  it.each([80, 200])(
    "at %i columns: no line is wider, no token is broken, and a hit hangs under its number",
    (width) => {
      const hits = [
        transcriptHit(),
        noteHit,
        transcriptHit({ context_id: "c9", score: { kind: "similarity", value: 0.8123 } })
      ]
      const wide = renderSearch(answer(hits), plainStyle)
      const wrapped = renderSearch(answer(hits), plainStyle, width)
      const lines = wrapped.split("\n")
      const longestToken = Math.max(...tokensOf(wide).map((t) => t.length))
      for (const line of lines) {
        // Only a token longer than the line (the transcript path here) may stand alone past it.
        if (line.length > width) expect(tokensOf(line).length, line).toBe(1)
      }
      expect(longestToken).toBeGreaterThan(80)
      // Every token of the unwrapped text is whole in the wrapped one, in the same order.
      expect(tokensOf(wrapped)).toEqual(tokensOf(wide))
      // Continuation lines of a hit are indented under its text, never at the left margin.
      const firstHit = lines.findIndex((l) => l.startsWith("1. "))
      const secondHit = lines.findIndex((l) => l.startsWith("2. "))
      expect(firstHit).toBeGreaterThan(0)
      for (const line of lines.slice(firstHit + 1, secondHit)) expect(line).toMatch(/^ {3}\S/)
      // The header's continuation hangs too.
      for (const line of lines.slice(1, firstHit)) expect(line).toMatch(/^ {2}\S/)
      if (width === 80) {
        expect(wrapped).toContain("fused 0.0315")
        expect(lines.length).toBeGreaterThan(wide.split("\n").length)
      }
    }
  )

  it("wraps styled text by what it shows: escape sequences take no columns", () => {
    const plain = renderSearch(answer([transcriptHit()]), plainStyle, 80)
    const styled = renderSearch(answer([transcriptHit()]), ansiStyle, 80)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escapes are what is removed
    expect(styled.replace(/\u001b\[[0-9;]*m/g, "")).toBe(plain)
  })

  it("without a width, each part of a hit stays on one line", () => {
    const text = renderSearch(answer([transcriptHit()]), plainStyle)
    expect(text.split("\n")).toHaveLength(5)
  })
})
