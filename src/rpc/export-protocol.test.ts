import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { MAX_IMPORT_BATCH_REVISIONS, MAX_IMPORT_BATCH_SESSIONS } from "../export/import-contract.js"
import { contentHash } from "../notes/note-content.js"
import { ExportPage, ImportNotes } from "./export-protocol.js"

// The export and restore procedures' requests are bounded like every other: a page's size and
// filters, a batch's lines and every string in them.

const accepts = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`
const content = {
  session_id: uuid(1),
  kind: "note" as const,
  authorship: "agent_generated" as const,
  tags: [],
  text: "a note",
  source_text: null
}
const revision = (overrides: Record<string, unknown> = {}) => ({
  line: 2,
  revision: {
    type: "note_revision",
    note_id: uuid(2),
    revision: 1,
    update_id: uuid(3),
    ...content,
    created_at: "2026-12-01T00:00:00.000Z",
    content_sha256: contentHash(content),
    ...overrides
  }
})
const session = {
  line: 1,
  session: {
    type: "context_session",
    id: uuid(1),
    binding_key: uuid(4),
    project: null,
    parent_session_id: null,
    created_at: "2026-12-01T00:00:00.000Z"
  }
}

describe("export and import requests are bounded", () => {
  it("an export page: at most 1,000 items, bounded filters", () => {
    expect(accepts(ExportPage.payloadSchema, { limit: 1_000, filters: { since: "2026-01-01", agent: "codex" } })).toBe(
      true
    )
    expect(accepts(ExportPage.payloadSchema, { limit: 1_001 })).toBe(false)
    expect(accepts(ExportPage.payloadSchema, { filters: { since: "x".repeat(101) } })).toBe(false)
    expect(
      accepts(ExportPage.payloadSchema, { cursor: { _tag: "notes", note_id: "n".repeat(201), revision: 1 } })
    ).toBe(false)
  })

  it("an import batch: bounded lines, ids that are UUIDs, texts within the note limits", () => {
    expect(accepts(ImportNotes.payloadSchema, { sessions: [session], revisions: [revision()] })).toBe(true)
    const many = Array.from({ length: MAX_IMPORT_BATCH_REVISIONS + 1 }, () => revision())
    expect(accepts(ImportNotes.payloadSchema, { sessions: [], revisions: many })).toBe(false)
    const sessions = Array.from({ length: MAX_IMPORT_BATCH_SESSIONS + 1 }, () => session)
    expect(accepts(ImportNotes.payloadSchema, { sessions, revisions: [] })).toBe(false)
    expect(accepts(ImportNotes.payloadSchema, { sessions: [], revisions: [revision({ note_id: "not-a-uuid" })] })).toBe(
      false
    )
    expect(
      accepts(ImportNotes.payloadSchema, { sessions: [], revisions: [revision({ text: "x".repeat(32_001) })] })
    ).toBe(false)
    expect(
      accepts(ImportNotes.payloadSchema, { sessions: [], revisions: [revision({ created_at: "yesterday" })] })
    ).toBe(false)
  })
})
