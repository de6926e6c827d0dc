import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { FORGET_TOOL_ANNOTATIONS, forgetTool } from "./forget-tool.js"
import { MCP_TOOLS } from "./mcp-server.js"

describe("the forget tool", () => {
  it("comes last, annotated destructive, not idempotent, closed-world", () => {
    expect(MCP_TOOLS.at(-1)?.definition.name).toBe("forget")
    expect(forgetTool.definition.annotations).toEqual({
      title: forgetTool.definition.title,
      ...FORGET_TOOL_ANNOTATIONS
    })
    expect(forgetTool.definition.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false
    })
    expect(forgetTool.definition.inputSchema.type).toBe("object")
    expect(forgetTool.definition.outputSchema?.type).toBe("object")
  })

  it("tells the agent to preview, show the person, and confirm only with their consent", () => {
    const text = forgetTool.definition.description ?? ""
    for (const phrase of ["only when the person asks", "without `token`", "explicit confirmation", "preview again"]) {
      expect(text).toContain(phrase)
    }
  })

  it.effect("refuses a selector naming two kinds, or none, before asking the daemon", () =>
    Effect.gen(function* () {
      for (const selector of [{ note: "n", session: "s" }, {}]) {
        const refused = yield* Effect.flip(forgetTool.prepare({ selector }))
        expect(refused._tag).toBe("InvalidArguments")
        expect(refused.message).toContain("exactly one")
      }
      const relative = yield* Effect.flip(forgetTool.prepare({ selector: { file: "notes.jsonl" } }))
      expect(relative.message).toContain("absolute")
      yield* forgetTool.prepare({ selector: { since: "2026-03-01" } })
      yield* forgetTool.prepare({ selector: { session: "s" }, token: "1.abc" })
    })
  )
})
