import { describe, expect, it } from "@effect/vitest"
import { ContextNotFound } from "../retrieval/context.js"
import { invalidQuery } from "../retrieval/invalid-query.js"
import { messageContextId, parseContextId, passageContextId } from "./context-id.js"

describe("context ids", () => {
  it("a passage is its message and its characters; a message is its row; a chunk id still parses", () => {
    expect(passageContextId(35, { char_start: 0, char_end: 1200 })).toBe("m35@0-1200")
    expect(parseContextId("m35@0-1200")).toEqual({
      kind: "message",
      message_id: 35,
      range: { char_start: 0, char_end: 1200 }
    })
    expect(parseContextId(messageContextId(35))).toEqual({ kind: "message", message_id: 35, range: null })
    expect(parseContextId("c34")).toEqual({ kind: "chunk", chunk_id: 34 })
  })

  it("anything else names nothing", () => {
    for (const bad of ["", "x1", "m", "c", "m1@", "m1@5", "m1@9-5", "c1@0-5", "m-1", " m1", "m1 ", "m1@0-5x"]) {
      expect(parseContextId(bad)).toBeNull()
    }
  })

  it("an unknown chunk id says why such ids go and which ids last", () => {
    const chunk = invalidQuery(new ContextNotFound({ context_id: "c34" }))
    expect(chunk.reason).toBe("no result has context id c34")
    expect(chunk.remediation).toContain("search again for an id of the form m<number>@<start>-<end>")
    expect(invalidQuery(new ContextNotFound({ context_id: "m9" })).remediation).toBe(
      "Use a context_id from a search or recent answer."
    )
  })
})
