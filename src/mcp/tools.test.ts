import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, JSONSchema } from "effect"
import { ContextRequest } from "../retrieval/context.js"
import { SearchRequest } from "../retrieval/contract.js"
import { RecentRequest } from "../retrieval/recent.js"
import { toolJsonSchema } from "./json-schema.js"
import {
  contextMessage,
  contextResponse,
  fakeClient,
  hit,
  recentResponse,
  searchResponse
} from "./mcp-fixtures.test-support.js"
import { McpContextResponse, McpRecentResponse, McpSearchResponse } from "./tool-results.js"
import { READ_ONLY_ANNOTATIONS, READ_TOOLS, SEARCH_TOOL_DEFAULT_LIMIT } from "./tools.js"

const tool = (name: string) => {
  const found = READ_TOOLS.find((t) => t.definition.name === name)
  if (found === undefined) throw new Error(`no tool ${name}`)
  return found
}

const prepared = (name: string, args: unknown) => Effect.either(tool(name).prepare(args))

describe("the read tools", () => {
  it("are search, recent, sessions, context and context_status, read-only, idempotent, closed-world", () => {
    expect(READ_TOOLS.map((t) => t.definition.name)).toEqual([
      "search",
      "recent",
      "sessions",
      "context",
      "context_status"
    ])
    for (const t of READ_TOOLS) {
      expect(t.definition.annotations).toMatchObject(READ_ONLY_ANNOTATIONS)
      expect(t.definition.description?.length ?? 0).toBeGreaterThan(100)
    }
  })

  it("take their input schemas from the daemon's request schemas", () => {
    expect(tool("recent").definition.inputSchema).toEqual(toolJsonSchema(RecentRequest))
    expect(tool("context").definition.inputSchema).toEqual(toolJsonSchema(ContextRequest))
    // search differs from SearchRequest in one keyword only: its limit's default.
    const search = tool("search").definition.inputSchema as { properties: Record<string, Record<string, unknown>> }
    const shared = toolJsonSchema(SearchRequest) as { properties: Record<string, Record<string, unknown>> }
    expect({
      ...search,
      properties: { ...search.properties, limit: { ...search.properties.limit, default: undefined } }
    }).toEqual({
      ...shared,
      properties: { ...shared.properties, limit: { ...shared.properties.limit, default: undefined } }
    })
    expect(search.properties.limit?.default).toBe(SEARCH_TOOL_DEFAULT_LIMIT)
    expect(JSONSchema.make(SearchRequest)).toHaveProperty("properties.limit")
    expect(tool("context_status").definition.inputSchema).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      required: [],
      properties: {},
      additionalProperties: false
    })
  })

  it("describe their answers with the MCP response schemas", () => {
    expect(tool("search").definition.outputSchema).toEqual(toolJsonSchema(McpSearchResponse))
    expect(tool("recent").definition.outputSchema).toEqual(toolJsonSchema(McpRecentResponse))
    expect(tool("context").definition.outputSchema).toEqual(toolJsonSchema(McpContextResponse))
    expect(tool("context_status").definition.outputSchema).toMatchObject({
      type: "object",
      properties: { index_state: expect.anything(), coverage: expect.anything(), capture: expect.anything() }
    })
  })

  it.scoped("decode search arguments with the shared schema and a default limit of 5", () =>
    Effect.gen(function* () {
      const { client, calls } = yield* fakeClient({ Search: () => searchResponse([hit()]) })
      const call = yield* tool("search").prepare({ query: "blue-green" })
      const answer = yield* call(client)
      expect(calls).toEqual([{ method: "Search", request: { query: "blue-green", filters: {}, limit: 5, offset: 0 } }])
      expect(answer).toMatchObject({ results: [{ context_id: "c12", source_session_id: expect.any(String) }] })

      const explicit = yield* tool("search").prepare({ query: "x", limit: 12, filters: { since: "2026-01-01" } })
      yield* explicit(client)
      expect(calls[1]?.request).toEqual({ query: "x", filters: { since: "2026-01-01" }, limit: 12, offset: 0 })

      // The agent's rephrasings go to the daemon as given, and the input schema bounds them.
      yield* (yield* tool("search").prepare({ query: "undo a release", rephrasings: ["rollback deployment"] }))(client)
      expect(calls[2]?.request).toMatchObject({ query: "undo a release", rephrasings: ["rollback deployment"] })
      const input = tool("search").definition.inputSchema as { properties: Record<string, unknown> }
      expect(input.properties.rephrasings).toMatchObject({
        type: "array",
        maxItems: 3,
        items: { type: "string", minLength: 1, maxLength: 200 }
      })
    })
  )

  it.scoped("refuse a bad argument naming the field, before any daemon is asked", () =>
    Effect.gen(function* () {
      const cases: Array<[string, unknown, string]> = [
        ["search", { query: "" }, "query"],
        ["search", { query: "x", limit: 0 }, "limit"],
        ["search", { query: "x", filters: { project: 7 } }, "filters.project"],
        ["search", { query: "x", limt: 3 }, "limt"],
        ["search", { query: "x", rephrasings: ["a", "b", "c", "d"] }, "rephrasings"],
        ["search", { query: "x", rephrasings: ["x".repeat(201)] }, "rephrasings.0"],
        ["recent", { days: -1 }, "days"],
        ["context", {}, "context_id"],
        ["context", { context_id: "c1", offset: 1.5 }, "offset"],
        ["context_status", { verbose: true }, "verbose"]
      ]
      for (const [name, args, field] of cases) {
        const result = yield* prepared(name, args)
        expect(Either.isLeft(result), `${name} ${JSON.stringify(args)}`).toBe(true)
        if (Either.isLeft(result)) {
          expect(result.left).toMatchObject({ _tag: "InvalidArguments", tool: name })
          expect(result.left.issues.map((i) => i.field)).toContain(field)
        }
      }
      // No arguments at all is an empty object (MCP lets a client leave them out).
      expect(Either.isRight(yield* prepared("context_status", undefined))).toBe(true)
      expect(Either.isRight(yield* prepared("recent", undefined))).toBe(true)
    })
  )

  it.scoped("take an optional agent on search, recent and context, pass it on, and say what it means", () =>
    Effect.gen(function* () {
      const inputs = {
        search: tool("search").definition.inputSchema as unknown as {
          properties: { filters: { properties: Record<string, { type?: string; description?: string }> } }
        },
        recent: tool("recent").definition.inputSchema as {
          properties: Record<string, { type?: string; description?: string }>
          required?: ReadonlyArray<string>
        },
        context: tool("context").definition.inputSchema as {
          properties: Record<string, { type?: string; description?: string }>
          required?: ReadonlyArray<string>
        }
      }
      for (const property of [
        inputs.search.properties.filters.properties.agent,
        inputs.recent.properties.agent,
        inputs.context.properties.agent
      ]) {
        // An open string on the wire; the description names the known agents.
        expect(property).toMatchObject({ type: "string", maxLength: 64 })
        expect(property?.description).toMatch(/codex, claude (\(Claude Code\) )?or gemini/)
      }
      expect(inputs.recent.required ?? []).not.toContain("agent")
      expect(inputs.context.required ?? []).not.toContain("agent")
      for (const name of ["search", "recent", "context"]) {
        expect(tool(name).definition.description).toMatch(/`agent`/)
      }

      const { client, calls } = yield* fakeClient({
        Search: () => searchResponse([hit({ agent: "claude", source_type: "claude_transcript" })]),
        Recent: () => recentResponse,
        Context: () => contextResponse([contextMessage("codex_transcript")])
      })
      const found = yield* (yield* tool("search").prepare({ query: "x", filters: { agent: "claude" } }))(client)
      expect(found).toMatchObject({ results: [{ agent: "claude", source_type: "claude_transcript" }] })
      yield* (yield* tool("recent").prepare({ agent: "codex" }))(client)
      const context = yield* (yield* tool("context").prepare({ context_id: "m40", agent: "codex" }))(client)
      expect(context).toMatchObject({ messages: [{ agent: "codex", source_type: "codex_transcript" }] })
      expect(calls.map((c) => c.request)).toEqual([
        { query: "x", filters: { agent: "claude" }, limit: 5, offset: 0 },
        { agent: "codex", limit: 20, offset: 0 },
        { context_id: "m40", agent: "codex", limit: 20, char_offset: 0 }
      ])
      // Not a string, or longer than any agent name: refused before the daemon is asked.
      for (const [name, args, field] of [
        ["search", { query: "x", filters: { agent: 7 } }, "filters.agent"],
        ["recent", { agent: "a".repeat(65) }, "agent"],
        ["context", { context_id: "m1", agent: null }, "agent"]
      ] as const) {
        const result = yield* prepared(name, args)
        if (Either.isRight(result)) return expect.fail(`${name} ${JSON.stringify(args)} is refused`)
        expect(result.left.issues.map((i) => i.field)).toContain(field)
      }
    })
  )

  it.scoped("name a context page's session from its messages, or from the anchor when the page is empty", () =>
    Effect.gen(function* () {
      const { client, calls } = yield* fakeClient({
        Context: (request: { readonly offset?: number | undefined }) =>
          request.offset === 0
            ? contextResponse([contextMessage("authored_update")], "ctx-1")
            : contextResponse([], "ctx-1")
      })
      const call = yield* tool("context").prepare({ context_id: "m40", offset: 5 })
      const answer = yield* call(client)
      expect(answer).toMatchObject({ context_session_id: "ctx-1", messages: [] })
      expect(calls.map((c) => c.request)).toEqual([
        { context_id: "m40", offset: 5, limit: 20, char_offset: 0 },
        { context_id: "m40", offset: 0, limit: 1, char_offset: Number.MAX_SAFE_INTEGER }
      ])
    })
  )
})
