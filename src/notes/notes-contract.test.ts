import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { toolJsonSchema } from "../mcp/json-schema.js"
import { argumentIssues } from "../mcp/tool-errors.js"
import { ListNotes, LogUpdate, NoteHistory, OpenSession, UpdateNote } from "../rpc/notes-protocol.js"
import {
  LogUpdateRequest,
  MAX_NOTE_TAGS,
  MAX_NOTE_TEXT_CHARS,
  MAX_SOURCE_TEXT_CHARS,
  MAX_TAG_CHARS
} from "./notes-contract.js"

const SESSION = "3f0c9a52-6a1b-4c1e-9d7e-2b5f8a4c6d10"
const UPDATE = "0199a000-0000-7000-8000-00000000abcd"
const valid = { session_id: SESSION, update_id: UPDATE, text: "Status: the importer streams." }

/** Each problem a decoding reports, as an agent reads it (one per field): the dotted path and the message. */
const problems = (value: unknown) => {
  const result = Schema.decodeUnknownEither(LogUpdate.payloadSchema, { errors: "all", onExcessProperty: "error" })(
    value
  )
  return Either.isLeft(result) ? argumentIssues(result.left).map((i) => ({ field: i.field, message: i.problem })) : []
}

describe("the notes contract", () => {
  it("the protocol's payloads are the contract's requests, with their defaults", () => {
    expect(LogUpdate.payloadSchema.fields).toEqual(LogUpdateRequest.fields)
    expect(Schema.decodeUnknownSync(LogUpdate.payloadSchema)(valid)).toEqual({
      ...valid,
      tags: [],
      kind: "note",
      authorship: "agent_generated"
    })
    expect(Schema.decodeUnknownSync(OpenSession.payloadSchema)({ binding_key: UPDATE })).toEqual({
      binding_key: UPDATE
    })
  })

  it("accepts every limit exactly", () => {
    expect(
      problems({
        ...valid,
        text: "x".repeat(MAX_NOTE_TEXT_CHARS),
        tags: Array.from({ length: MAX_NOTE_TAGS }, (_, i) => `${i}`.padEnd(MAX_TAG_CHARS, "t")),
        source_text: "s".repeat(MAX_SOURCE_TEXT_CHARS)
      })
    ).toEqual([])
  })

  it("refuses each limit with a message naming the size and the limit, never the text", () => {
    expect(problems({ ...valid, text: "x".repeat(MAX_NOTE_TEXT_CHARS + 1) })).toEqual([
      {
        field: "text",
        message:
          "is 16,001 characters long; a note is at most 16,000 characters: log a shorter summary, or split it into several updates"
      }
    ])
    expect(problems({ ...valid, tags: Array.from({ length: MAX_NOTE_TAGS + 1 }, () => "t") })).toEqual([
      { field: "tags", message: "has 21 tags; a note has at most 20" }
    ])
    expect(problems({ ...valid, tags: ["ok", "t".repeat(MAX_TAG_CHARS + 1)] })).toEqual([
      { field: "tags.1", message: "is 65 characters long; a tag is at most 64 characters" }
    ])
    expect(problems({ ...valid, source_text: "s".repeat(MAX_SOURCE_TEXT_CHARS + 1) })).toEqual([
      { field: "source_text", message: "is 32,001 characters long; source_text is at most 32,000 characters" }
    ])
  })

  it("refuses blank text and tags, ids that are not UUIDs, unknown kinds and arguments", () => {
    expect(problems({ ...valid, text: " \n\t" })).toEqual([
      { field: "text", message: "is empty: a note needs some text" }
    ])
    expect(problems({ ...valid, tags: [""] })).toEqual([
      { field: "tags.0", message: "is empty: a tag needs some text" }
    ])
    expect(problems({ ...valid, session_id: "codex-session-7" }).map((p) => p.field)).toEqual(["session_id"])
    expect(problems({ ...valid, update_id: 7 }).map((p) => p.field)).toEqual(["update_id"])
    expect(problems({ ...valid, kind: "thought" }).map((p) => p.field)).toEqual(["kind"])
    expect(problems({ ...valid, authorship: "model" }).map((p) => p.field)).toEqual(["authorship"])
    expect(problems({ ...valid, mood: "great" }).map((p) => p.field)).toEqual(["mood"])
  })
})

describe("open_session's project", () => {
  const openProblems = (value: unknown) => {
    const result = Schema.decodeUnknownEither(OpenSession.payloadSchema, { errors: "all" })(value)
    return Either.isLeft(result) ? argumentIssues(result.left).map((i) => ({ field: i.field, message: i.problem })) : []
  }

  it("takes an absolute path; a relative one or one with .. segments is refused, naming the field", () => {
    expect(openProblems({ binding_key: UPDATE, project: "/home/dev/shop-api" })).toEqual([])
    for (const project of [
      "relative/../path",
      "shop-api",
      "./shop-api",
      "/home/dev/../root",
      "/home/dev/..",
      "~/code"
    ]) {
      const found = openProblems({ binding_key: UPDATE, project })
      expect(found.map((p) => p.field)).toEqual(["project"])
      expect(found[0]?.message).toMatch(/absolute path/)
    }
  })

  it("says so in the MCP tool's JSON schema, derived from the contract", () => {
    const schema = toolJsonSchema(OpenSession.payloadSchema) as {
      properties: { project: { pattern?: string; description?: string } }
    }
    expect(schema.properties.project.description).toContain("absolute")
    expect(schema.properties.project.pattern).toBeDefined()
    expect(new RegExp(schema.properties.project.pattern as string).test("relative/../path")).toBe(false)
    expect(new RegExp(schema.properties.project.pattern as string).test("/home/dev/../root")).toBe(false)
    expect(new RegExp(schema.properties.project.pattern as string).test("/home/dev/shop-api")).toBe(true)
  })
})

describe("the revision procedures' requests", () => {
  const decodes = (schema: Schema.Schema<unknown, unknown>, value: unknown) =>
    Either.isRight(Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(value))
  const NOTE = "9d2f1c7e-4b3a-4e5f-8a6b-7c8d9e0f1a2b"
  const update = UpdateNote.payloadSchema as unknown as Schema.Schema<unknown, unknown>
  const history = NoteHistory.payloadSchema as unknown as Schema.Schema<unknown, unknown>
  const list = ListNotes.payloadSchema as unknown as Schema.Schema<unknown, unknown>

  it("update_note: a note UUID, a revision from 1, the note text and tag limits, no kind", () => {
    expect(decodes(update, { note_id: NOTE, expected_revision: 1, text: "ok" })).toBe(true)
    expect(decodes(update, { note_id: "note-1", expected_revision: 1, text: "ok" })).toBe(false)
    expect(decodes(update, { note_id: "x".repeat(15 * 1024 * 1024), expected_revision: 1, text: "ok" })).toBe(false)
    expect(decodes(update, { note_id: NOTE, expected_revision: 0, text: "ok" })).toBe(false)
    expect(decodes(update, { note_id: NOTE, expected_revision: 1.5, text: "ok" })).toBe(false)
    expect(decodes(update, { note_id: NOTE, expected_revision: 1, text: "x".repeat(MAX_NOTE_TEXT_CHARS + 1) })).toBe(
      false
    )
    expect(
      decodes(update, { note_id: NOTE, expected_revision: 1, text: "ok", tags: ["t".repeat(MAX_TAG_CHARS + 1)] })
    ).toBe(false)
    expect(decodes(update, { note_id: NOTE, expected_revision: 1, text: "ok", kind: "status" })).toBe(false)
    expect(decodes(update, { note_id: NOTE, expected_revision: 1, text: "ok", session_id: "s" })).toBe(false)
  })

  it("note_history takes a note UUID; a list bounds its project, session and page", () => {
    expect(decodes(history, { note_id: NOTE })).toBe(true)
    expect(decodes(history, { note_id: "x".repeat(201) })).toBe(false)
    expect(decodes(list, {})).toBe(true)
    expect(decodes(list, { project: `/${"p".repeat(4_095)}`, session_id: "s".repeat(200) })).toBe(true)
    expect(decodes(list, { project: `/${"p".repeat(4_096)}` })).toBe(false)
    expect(decodes(list, { session_id: "s".repeat(201) })).toBe(false)
    expect(decodes(list, { limit: 201 })).toBe(false)
  })
})
