import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Stream } from "effect"
import { contentHash } from "../notes/note-content.js"
import { TranscriptSpan } from "../retrieval/contract.js"
import {
  type ContextSessionLine,
  decodeExportLine,
  type ExportLine,
  encodeExportLine,
  type MessageLine,
  type NoteRevisionLine
} from "../retrieval/export-format.js"
import { ExportFileError, importBatches, readExportFile } from "./export-file.js"
import { MAX_IMPORT_BATCH_REVISIONS } from "./import-contract.js"

// The export file's format: what export encodes, import decodes exactly, and a file that is not
// whole (no header, bad lines, no end line, counts that differ) is refused before anything is
// imported, naming the line.

const SCHEMA = 7
const id = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`

const header: ExportLine = {
  type: "header",
  format: "blctx-export",
  format_version: 1,
  schema_version: SCHEMA,
  exported_at: "2026-12-01T06:00:00.000Z",
  installation_id: id(99),
  filters: { agent: "codex" }
}
const session = (n: number, parent: number | null = null): ContextSessionLine => ({
  type: "context_session",
  id: id(n),
  binding_key: id(100 + n),
  project: "/home/dev/shop",
  parent_session_id: parent === null ? null : id(parent),
  created_at: "2026-11-30T10:00:00.000Z"
})
const revision = (
  note: number,
  rev: number,
  sessionN: number,
  text = `note ${note} revision ${rev}`
): NoteRevisionLine => {
  const content = {
    session_id: id(sessionN),
    kind: "decision" as const,
    authorship: "agent_generated" as const,
    tags: ["cache"],
    text,
    source_text: null
  }
  return {
    type: "note_revision",
    note_id: id(1000 + note),
    revision: rev,
    update_id: id(2000 + note * 10 + rev),
    ...content,
    created_at: `2026-11-30T10:${String(rev % 60).padStart(2, "0")}:00.000Z`,
    content_sha256: contentHash(content)
  }
}
const message: MessageLine = {
  type: "message",
  id: 7,
  source_type: "codex_transcript",
  agent: "codex",
  session_id: "rollout-1",
  turn_number: 1,
  turn_id: "t1",
  role: "user",
  kind: "message",
  phase: null,
  text: "how do we cache?",
  cwd: "/home/dev/shop",
  timestamp: "2026-11-30T09:00:00.000Z",
  source: new TranscriptSpan({ agent: "codex", path: "/x/rollout.jsonl", line: 3, byte_start: 10, byte_end: 90 })
}
const end = (
  counts: Partial<Record<"context_sessions" | "notes" | "note_revisions" | "messages", number>>
): ExportLine => ({
  type: "end",
  counts: { context_sessions: 0, notes: 0, note_revisions: 0, messages: 0, ...counts }
})

const whole: ReadonlyArray<ExportLine> = [
  header,
  session(1),
  session(2, 1),
  revision(1, 1, 1),
  revision(1, 2, 2),
  revision(2, 1, 2),
  message,
  end({ context_sessions: 2, notes: 2, note_revisions: 3, messages: 1 })
]
const text = (lines: ReadonlyArray<ExportLine>) => lines.map(encodeExportLine)
const read = (lines: ReadonlyArray<string>) => readExportFile(Stream.fromIterable(lines), SCHEMA)
const refusal = (lines: ReadonlyArray<string>) =>
  Effect.flip(read(lines)).pipe(Effect.tap((e) => expect(e).toBeInstanceOf(ExportFileError)))

describe("the export file", () => {
  it("every line decodes to what was encoded", () => {
    for (const line of whole) {
      const decoded = decodeExportLine(encodeExportLine(line))
      expect(Either.getOrThrow(decoded)).toEqual(line)
    }
  })

  it.effect("a whole file is read: sessions and revisions kept with their line numbers, messages counted", () =>
    Effect.gen(function* () {
      const file = yield* read(text(whole))
      expect(file.header).toEqual(header)
      expect(file.sessions.map((s) => s.line)).toEqual([2, 3])
      expect(file.revisions.map((r) => [r.line, r.revision.revision])).toEqual([
        [4, 1],
        [5, 2],
        [6, 1]
      ])
      expect(file.messages).toBe(1)
    })
  )

  it.effect("a file that is not whole is refused, naming the line", () =>
    Effect.gen(function* () {
      const lines = text(whole)
      const cases: ReadonlyArray<[ReadonlyArray<string>, number, string]> = [
        [[], 1, "the file is empty"],
        [["{not json", ...lines.slice(1)], 1, "is not JSON"],
        [[lines[1] ?? "", ...lines.slice(1)], 1, "starts with its header"],
        [[encodeExportLine({ ...header, format_version: 2 } as ExportLine), ...lines.slice(1)], 1, "version 2"],
        [[encodeExportLine({ ...header, schema_version: SCHEMA + 1 } as ExportLine), ...lines.slice(1)], 1, "newer"],
        [[lines[0] ?? "", JSON.stringify({ type: "attachment" }), ...lines.slice(1)], 2, 'unknown type "attachment"'],
        [
          [lines[0] ?? "", JSON.stringify({ type: "note_revision", note_id: "x" }), ...lines.slice(1)],
          2,
          "not a valid note_revision"
        ],
        [lines.slice(0, -1), 8, "cut short"],
        [[...lines.slice(0, 3), ...lines.slice(4)], 7, "counts 3 note_revisions, but the file holds 2 note_revisions"],
        [[...lines, lines[1] ?? ""], 9, "after the end line"],
        [[...lines.slice(0, 2), "", ...lines.slice(2)], 3, "is empty"]
      ]
      for (const [input, line, reason] of cases) {
        const error = yield* refusal(input)
        expect(error.line, reason).toBe(line)
        expect(error.message).toContain(reason)
        expect(error.message).toContain("nothing was imported")
      }
    })
  )

  it.effect("batches keep a note's revisions together and carry their sessions with ancestors, parents first", () =>
    Effect.gen(function* () {
      const file = yield* read(text(whole))
      const batches = importBatches(file)
      expect(batches).toHaveLength(1)
      expect(batches[0]?.sessions.map((s) => s.session.id)).toEqual([id(1), id(2)])
      expect(batches[0]?.revisions).toHaveLength(3)

      // Many notes: batches close between notes; a note larger than a batch goes in parts, in order.
      const many: Array<ExportLine> = [header, session(1), session(3)]
      for (let n = 0; n < MAX_IMPORT_BATCH_REVISIONS - 1; n++) many.push(revision(100 + n, 1, 3))
      for (let r = 1; r <= MAX_IMPORT_BATCH_REVISIONS + 5; r++) many.push(revision(1, r, 1))
      const count = MAX_IMPORT_BATCH_REVISIONS - 1 + MAX_IMPORT_BATCH_REVISIONS + 5
      many.push(end({ context_sessions: 2, notes: MAX_IMPORT_BATCH_REVISIONS, note_revisions: count }))
      const split = importBatches(yield* read(text(many)))
      expect(split.map((b) => b.revisions.length)).toEqual([
        MAX_IMPORT_BATCH_REVISIONS - 1,
        MAX_IMPORT_BATCH_REVISIONS,
        5
      ])
      expect(split[0]?.sessions.map((s) => s.session.id)).toEqual([id(3)])
      expect(split[1]?.revisions.map((r) => r.revision.revision)).toEqual(
        Array.from({ length: MAX_IMPORT_BATCH_REVISIONS }, (_, i) => i + 1)
      )
      expect(split[2]?.sessions.map((s) => s.session.id)).toEqual([id(1)])
    })
  )
})
