import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  LogUpdateRequest,
  LogUpdateResponse,
  OpenSessionRequest,
  OpenSessionResponse,
  SessionBindingConflict,
  UnknownContextSession,
  UpdateConflict
} from "../notes/notes-contract.js"
import { toolJsonSchema } from "./json-schema.js"
import { fakeClient, identity, toolLayer } from "./mcp-fixtures.test-support.js"
import { callTool, MCP_TOOLS } from "./mcp-server.js"
import { NOTE_TOOL_ANNOTATIONS, NOTE_TOOLS } from "./note-tools.js"
import type { ToolErrorDocument } from "./tool-errors.js"
import { McpLogUpdateResponse, McpOpenSessionResponse } from "./tool-results.js"

const tool = (name: string) => {
  const found = NOTE_TOOLS.find((t) => t.definition.name === name)
  if (found === undefined) throw new Error(`no tool ${name}`)
  return found
}

const SESSION = "3f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10"
const UPDATE = "0199a000-0000-7000-8000-00000000abcd"
const BINDING = "0199a000-0000-7000-8000-000000000001"

const session = new OpenSessionResponse({
  session_id: SESSION,
  binding_key: BINDING,
  project: "/home/dev/shop-api",
  parent_session_id: null,
  created_at: "2026-02-02T09:00:00.000Z",
  created: true
})
const logged = new LogUpdateResponse({
  update_id: UPDATE,
  note_id: "9d2f1c7e-4b3a-4e5f-8a6b-7c8d9e0f1a2b",
  revision: 1,
  source_type: "authored_update",
  session_id: SESSION,
  context_id: "m41",
  kind: "decision",
  authorship: "agent_generated",
  tags: ["deploy"],
  created_at: "2026-02-02T09:00:05.000Z",
  redactions: 0,
  created: true
})

const errorOf = (result: { readonly isError?: boolean | undefined; readonly content: ReadonlyArray<unknown> }) => {
  expect(result.isError).toBe(true)
  const [block] = result.content as ReadonlyArray<{ readonly type: string; readonly text: string }>
  return (JSON.parse(block?.text ?? "{}") as ToolErrorDocument).error
}

describe("the note tools", () => {
  it("are open_session and log_update, after the read tools: writes that are idempotent, safe and local", () => {
    expect(MCP_TOOLS.map((t) => t.definition.name)).toEqual([
      "search",
      "recent",
      "sessions",
      "context",
      "context_status",
      "open_session",
      "log_update",
      "update_note",
      "note_history",
      "forget"
    ])
    for (const t of NOTE_TOOLS.filter((n) => ["open_session", "log_update"].includes(n.definition.name))) {
      expect(t.definition.annotations).toEqual({ title: t.definition.title, ...NOTE_TOOL_ANNOTATIONS })
      expect(t.definition.annotations).toMatchObject({
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false
      })
    }
  })

  it("teach an agent when and how to use them", () => {
    const open = tool("open_session").definition.description ?? ""
    expect(open).toContain("once per conversation")
    expect(open).toContain("context_session_id")
    const log = tool("log_update").definition.description ?? ""
    for (const phrase of [
      "Never log private reasoning, raw tool output",
      "secrets",
      "copy that message exactly, character for character, into `source_text`",
      "same update_id and the same content is safe",
      "16,000 characters",
      "at most 20 `tags`, each at most 64 characters",
      "authored_updates_pending",
      "context_session_id"
    ]) {
      expect(log).toContain(phrase)
    }
  })

  it("take their input schemas from the daemon's request schemas, limits included", () => {
    expect(tool("open_session").definition.inputSchema).toEqual(toolJsonSchema(OpenSessionRequest))
    const input = tool("log_update").definition.inputSchema as {
      required: ReadonlyArray<string>
      properties: Record<string, Record<string, unknown>>
    }
    expect(input).toEqual(toolJsonSchema(LogUpdateRequest))
    expect(input.required).toEqual(["session_id", "update_id", "text"])
    expect(input.properties.text).toMatchObject({ type: "string", maxLength: 16_000 })
    expect(input.properties.tags).toMatchObject({ maxItems: 20, items: { maxLength: 64 }, default: [] })
    expect(input.properties.kind).toMatchObject({ enum: ["status", "decision", "note"], default: "note" })
    expect(input.properties.authorship).toMatchObject({
      enum: ["agent_generated", "user_requested"],
      default: "agent_generated"
    })
    expect(input.properties.source_text).toMatchObject({ type: "string", maxLength: 32_000 })
    expect(input.properties.session_id).toMatchObject({ format: "uuid" })
    expect(JSON.stringify(input)).not.toContain("$ref")
  })

  it("answer with the blctx session as context_session_id, never a bare session_id", () => {
    for (const [name, schema] of [
      ["open_session", toolJsonSchema(McpOpenSessionResponse)],
      ["log_update", toolJsonSchema(McpLogUpdateResponse)]
    ] as const) {
      const output = tool(name).definition.outputSchema as {
        required: ReadonlyArray<string>
        properties: Record<string, unknown>
      }
      expect(output).toEqual(schema)
      expect(output.required).toContain("context_session_id")
      expect(output.properties).not.toHaveProperty("session_id")
    }
    const log = tool("log_update").definition.outputSchema as { properties: Record<string, unknown> }
    expect(log.properties.source_type).toMatchObject({ enum: ["authored_update"] })
  })

  it.scoped("decode their arguments with the shared schemas and send the defaults", () =>
    Effect.gen(function* () {
      const { client, calls } = yield* fakeClient({ OpenSession: () => session, LogUpdate: () => logged })
      const opened = yield* (yield* tool("open_session").prepare({ binding_key: BINDING }))(client)
      expect(opened).toMatchObject({ context_session_id: SESSION, created: true })
      expect(opened).not.toHaveProperty("session_id")
      const answer = yield* (yield* tool("log_update").prepare({
        session_id: SESSION,
        update_id: UPDATE,
        text: "Decision: blue-green deploys."
      }))(client)
      expect(answer).toMatchObject({
        context_session_id: SESSION,
        source_type: "authored_update",
        note_id: logged.note_id
      })
      expect(answer).not.toHaveProperty("session_id")
      expect(calls.map((c) => c.request)).toEqual([
        { binding_key: BINDING },
        {
          session_id: SESSION,
          update_id: UPDATE,
          text: "Decision: blue-green deploys.",
          tags: [],
          kind: "note",
          authorship: "agent_generated"
        }
      ])
    })
  )

  it.scoped("refuse each limit with a clear field error, before any daemon is asked", () =>
    Effect.gen(function* () {
      const base = { session_id: SESSION, update_id: UPDATE, text: "ok" }
      const cases: Array<[unknown, string, string]> = [
        [{ ...base, text: "x".repeat(16_001) }, "text", "is 16,001 characters long; a note is at most 16,000"],
        [{ ...base, tags: Array.from({ length: 21 }, () => "t") }, "tags", "has 21 tags; a note has at most 20"],
        [{ ...base, tags: ["t".repeat(65)] }, "tags.0", "is 65 characters long; a tag is at most 64"],
        [{ ...base, text: "   " }, "text", "is empty"],
        [{ ...base, session_id: "not-a-uuid" }, "session_id", "UUID"],
        [{ ...base, kind: "thought" }, "kind", "status"],
        [{ ...base, extra: 1 }, "extra", "is not an argument of this tool"]
      ]
      for (const [args, field, problem] of cases) {
        const result = yield* Effect.either(tool("log_update").prepare(args))
        expect(Either.isLeft(result), field).toBe(true)
        if (Either.isLeft(result)) {
          const issue = result.left.issues.find((i) => i.field === field)
          expect(issue?.problem, JSON.stringify(result.left.issues)).toContain(problem)
          // The refused text is never echoed back.
          expect(result.left.message.length).toBeLessThan(500)
        }
      }
      const open = yield* Effect.either(tool("open_session").prepare({ project: "/p" }))
      expect(Either.isLeft(open) && open.left.issues.map((i) => i.field)).toEqual(["binding_key"])
    })
  )

  it.scoped("report the daemon's refusals as errors an agent can act on", () =>
    Effect.gen(function* () {
      const refusals = [
        [
          "open_session",
          { binding_key: BINDING, project: "/other" },
          new SessionBindingConflict({
            binding_key: BINDING,
            session_id: SESSION,
            conflicts: [{ field: "project", opened_with: "/home/dev/shop-api", requested: "/other" }]
          }),
          "session_conflict"
        ],
        [
          "log_update",
          { session_id: SESSION, update_id: UPDATE, text: "x" },
          new UnknownContextSession({ session_id: SESSION, field: "session_id" }),
          "unknown_session"
        ],
        [
          "log_update",
          { session_id: SESSION, update_id: UPDATE, text: "x" },
          new UpdateConflict({ update_id: UPDATE, note_id: logged.note_id, differing: ["text"] }),
          "update_conflict"
        ]
      ] as const
      for (const [name, args, refusal, kind] of refusals) {
        const { client } = yield* fakeClient({
          Ping: () => identity(),
          OpenSession: () => Effect.fail(refusal),
          LogUpdate: () => Effect.fail(refusal)
        })
        const result = yield* callTool(tool(name), args).pipe(Effect.provide(toolLayer(client)))
        const error = errorOf(result)
        expect(error).toMatchObject({ kind, tool: name, message: refusal.message, remediation: refusal.remediation })
      }
    })
  )
})
