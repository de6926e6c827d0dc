import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  NoteHistoryRequest,
  NoteHistoryResponse,
  NoteRevisionEntry,
  StaleRevision,
  UnknownNote,
  UpdateNoteRequest,
  UpdateNoteResponse
} from "../notes/notes-contract.js"
import { toolJsonSchema } from "./json-schema.js"
import { fakeClient, identity, toolLayer } from "./mcp-fixtures.test-support.js"
import { callTool } from "./mcp-server.js"
import { NOTE_TOOLS } from "./note-tools.js"
import type { ToolErrorDocument } from "./tool-errors.js"
import { McpNoteHistoryResponse, McpUpdateNoteResponse } from "./tool-results.js"
import { READ_ONLY_ANNOTATIONS } from "./tools.js"

// The revision tools: update_note (a write that is not idempotent) and note_history (a read).

const tool = (name: string) => {
  const found = NOTE_TOOLS.find((t) => t.definition.name === name)
  if (found === undefined) throw new Error(`no tool ${name}`)
  return found
}

const NOTE = "9d2f1c7e-4b3a-4e5f-8a6b-7c8d9e0f1a2b"
const SESSION = "3f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10"
const UPDATE = "0199a000-0000-7000-8000-00000000abcd"

const updated = new UpdateNoteResponse({
  update_id: UPDATE,
  note_id: NOTE,
  revision: 2,
  previous_revision: 1,
  source_type: "authored_update",
  session_id: SESSION,
  context_id: "m42",
  kind: "decision",
  authorship: "agent_generated",
  tags: ["deploy"],
  created_at: "2026-02-02T09:10:00.000Z",
  redactions: 0,
  created: true
})

const revision = (n: number, text: string) =>
  new NoteRevisionEntry({
    revision: n,
    update_id: `0199a000-0000-7000-8000-00000000000${n}`,
    text,
    tags: ["deploy"],
    authorship: "agent_generated",
    session_id: SESSION,
    created_at: `2026-02-02T09:0${n}:00.000Z`,
    source_text: null,
    context_id: `m${40 + n}`
  })

const history = new NoteHistoryResponse({
  note_id: NOTE,
  current_revision: 2,
  kind: "decision",
  revisions: [revision(1, "Decision: Tuesdays."), revision(2, "Decision: Wednesdays.")]
})

const errorOf = (result: { readonly isError?: boolean | undefined; readonly content: ReadonlyArray<unknown> }) => {
  expect(result.isError).toBe(true)
  const [block] = result.content as ReadonlyArray<{ readonly type: string; readonly text: string }>
  return (JSON.parse(block?.text ?? "{}") as ToolErrorDocument).error
}

describe("the revision tools", () => {
  it("update_note is a write that is not idempotent, yet safe and local; note_history is read-only", () => {
    expect(tool("update_note").definition.annotations).toEqual({
      title: tool("update_note").definition.title,
      readOnlyHint: false,
      idempotentHint: false,
      destructiveHint: false,
      openWorldHint: false
    })
    expect(tool("note_history").definition.annotations).toEqual({
      title: tool("note_history").definition.title,
      ...READ_ONLY_ANNOTATIONS
    })
  })

  it("teach an agent when to use them and what to do on a stale revision", () => {
    const update = tool("update_note").definition.description ?? ""
    expect(update).toContain("expected_revision")
    expect(update).toContain("stale_revision")
    expect(update).toContain("note_history")
    expect(update).toContain("not destructive")
    const read = tool("note_history").definition.description ?? ""
    expect(read).toContain("oldest first")
    expect(read).toContain("current_revision")
  })

  it("take their schemas from the daemon's, with the session named context_session_id", () => {
    expect(tool("update_note").definition.inputSchema).toEqual(toolJsonSchema(UpdateNoteRequest))
    expect(tool("note_history").definition.inputSchema).toEqual(toolJsonSchema(NoteHistoryRequest))
    expect(tool("update_note").definition.outputSchema).toEqual(toolJsonSchema(McpUpdateNoteResponse))
    expect(tool("note_history").definition.outputSchema).toEqual(toolJsonSchema(McpNoteHistoryResponse))
    const output = JSON.stringify(tool("note_history").definition.outputSchema)
    expect(output).toContain("context_session_id")
    expect(output).not.toContain('"session_id"')
  })

  it.scoped("decode arguments, send the defaults, and rename the session in the answers", () =>
    Effect.gen(function* () {
      const { client, calls } = yield* fakeClient({ UpdateNote: () => updated, NoteHistory: () => history })
      const answer = yield* (yield* tool("update_note").prepare({
        note_id: NOTE,
        expected_revision: 1,
        text: "Decision: Wednesdays."
      }))(client)
      expect(answer).toMatchObject({ revision: 2, previous_revision: 1, context_session_id: SESSION })
      expect(answer).not.toHaveProperty("session_id")
      const listed = yield* (yield* tool("note_history").prepare({ note_id: NOTE }))(client)
      expect(listed).toMatchObject({ current_revision: 2, revisions: [{ revision: 1 }, { revision: 2 }] })
      expect((listed.revisions as ReadonlyArray<Record<string, unknown>>)[0]).toMatchObject({
        context_session_id: SESSION
      })
      expect((listed.revisions as ReadonlyArray<Record<string, unknown>>)[0]).not.toHaveProperty("session_id")
      expect(calls.map((c) => c.request)).toEqual([
        { note_id: NOTE, expected_revision: 1, text: "Decision: Wednesdays.", authorship: "agent_generated" },
        { note_id: NOTE }
      ])
    })
  )

  it.scoped("refuse bad arguments before any daemon is asked", () =>
    Effect.gen(function* () {
      const base = { note_id: NOTE, expected_revision: 1, text: "ok" }
      const cases: Array<[unknown, string]> = [
        [{ ...base, expected_revision: 0 }, "expected_revision"],
        [{ ...base, note_id: "note-1" }, "note_id"],
        [{ ...base, text: "x".repeat(16_001) }, "text"],
        [{ ...base, kind: "status" }, "kind"]
      ]
      for (const [args, field] of cases) {
        const result = yield* Effect.either(tool("update_note").prepare(args))
        expect(Either.isLeft(result) && result.left.issues.map((i) => i.field), field).toEqual([field])
      }
    })
  )

  it.scoped("report unknown_note and stale_revision as errors an agent can act on", () =>
    Effect.gen(function* () {
      const stale = new StaleRevision({ note_id: NOTE, expected_revision: 1, current_revision: 3 })
      const unknown = new UnknownNote({ note_id: NOTE })
      const cases = [
        ["update_note", { note_id: NOTE, expected_revision: 1, text: "x" }, stale, "stale_revision"],
        ["update_note", { note_id: NOTE, expected_revision: 1, text: "x" }, unknown, "unknown_note"],
        ["note_history", { note_id: NOTE }, unknown, "unknown_note"]
      ] as const
      for (const [name, args, refusal, kind] of cases) {
        const { client } = yield* fakeClient({
          Ping: () => identity(),
          UpdateNote: () => Effect.fail(refusal),
          NoteHistory: () => Effect.fail(refusal)
        })
        const result = yield* callTool(tool(name), args).pipe(Effect.provide(toolLayer(client)))
        expect(errorOf(result)).toMatchObject({
          kind,
          tool: name,
          message: refusal.message,
          remediation: refusal.remediation
        })
      }
      expect(stale.remediation).toContain("expected_revision 3")
    })
  )
})
