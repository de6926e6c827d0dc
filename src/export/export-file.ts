import { Data, Effect, Either, ParseResult, Stream } from "effect"
import {
  decodeExportLine,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type ExportCounts,
  type HeaderLine
} from "../retrieval/export-format.js"
import {
  type ImportedRevision,
  type ImportedSession,
  type ImportNotesRequest,
  MAX_IMPORT_BATCH_CHARS,
  MAX_IMPORT_BATCH_REVISIONS
} from "./import-contract.js"

/** An export file `import-notes` refuses: nothing of it was imported. Names the line. */
export class ExportFileError extends Data.TaggedError("ExportFileError")<{
  readonly line: number
  readonly reason: string
}> {
  override get message() {
    return `line ${this.line}: ${this.reason}; nothing was imported`
  }
}

/** What `import-notes` keeps of a file: its sessions and note revisions. Messages are only counted. */
export interface ReadExport {
  readonly header: HeaderLine
  readonly sessions: ReadonlyArray<ImportedSession>
  readonly revisions: ReadonlyArray<ImportedRevision>
  readonly messages: number
  readonly counts: ExportCounts
}

const KNOWN_TYPES = ["header", "context_session", "note_revision", "message", "end"]

/** Why a line did not decode, without echoing its text (it may hold anything). */
const whyNot = (text: string, error: ParseResult.ParseError): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return "is not JSON"
  }
  const type = typeof parsed === "object" && parsed !== null ? (parsed as { type?: unknown }).type : undefined
  if (typeof type !== "string" || !KNOWN_TYPES.includes(type)) {
    return `has an unknown type ${JSON.stringify(type ?? null)} (expected ${KNOWN_TYPES.join(", ")})`
  }
  return `is not a valid ${type} line: ${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 500)}`
}

/**
 * Reads an export file line by line and checks it whole before anything is imported: a header
 * first (this format, a version this build reads, a schema no newer than this build's), valid
 * lines, and the `end` trailer last with the counts of what came before it, so a file cut short
 * (or altered) is refused rather than half-imported. Sessions and note revisions are kept (what
 * `import-notes` restores); transcript messages are counted and dropped, so memory grows with
 * the notes, not with the transcripts.
 */
export const readExportFile = <E>(lines: Stream.Stream<string, E>, schemaVersion: number) =>
  Effect.gen(function* () {
    let header: HeaderLine | undefined
    let end: ExportCounts | undefined
    let lineNumber = 0
    const sessions: Array<ImportedSession> = []
    const revisions: Array<ImportedRevision> = []
    const notes = new Set<string>()
    let messages = 0
    yield* Stream.runForEach(lines, (text) =>
      Effect.gen(function* () {
        lineNumber++
        const line = lineNumber
        if (end !== undefined) {
          return yield* new ExportFileError({ line, reason: "comes after the end line" })
        }
        if (text.trim() === "") return yield* new ExportFileError({ line, reason: "is empty" })
        const decoded = decodeExportLine(text)
        if (Either.isLeft(decoded)) return yield* new ExportFileError({ line, reason: whyNot(text, decoded.left) })
        const value = decoded.right
        if (line === 1) {
          if (value.type !== "header") {
            return yield* new ExportFileError({
              line,
              reason: `is a ${value.type} line; a blctx export starts with its header`
            })
          }
          if (value.format_version !== EXPORT_FORMAT_VERSION) {
            return yield* new ExportFileError({
              line,
              reason: `is ${EXPORT_FORMAT} version ${value.format_version}; this blctx reads version ${EXPORT_FORMAT_VERSION} (upgrade blctx to import it)`
            })
          }
          if (value.schema_version > schemaVersion) {
            return yield* new ExportFileError({
              line,
              reason: `was exported from schema version ${value.schema_version}, newer than this blctx's ${schemaVersion} (upgrade blctx to import it)`
            })
          }
          header = value
          return
        }
        switch (value.type) {
          case "header":
            return yield* new ExportFileError({ line, reason: "is a second header" })
          case "context_session":
            sessions.push({ line, session: value })
            return
          case "note_revision":
            revisions.push({ line, revision: value })
            notes.add(value.note_id)
            return
          case "message":
            messages++
            return
          case "end":
            end = value.counts
            return
        }
      })
    )
    if (header === undefined) return yield* new ExportFileError({ line: 1, reason: "is missing: the file is empty" })
    if (end === undefined) {
      return yield* new ExportFileError({
        line: lineNumber + 1,
        reason: "should be the end line, which is missing: the file was cut short (export it again)"
      })
    }
    const read: ExportCounts = {
      context_sessions: sessions.length,
      notes: notes.size,
      note_revisions: revisions.length,
      messages
    }
    const differing = (Object.keys(read) as Array<keyof ExportCounts>).filter((k) => read[k] !== end?.[k])
    if (differing.length > 0) {
      return yield* new ExportFileError({
        line: lineNumber,
        reason: `the end line counts ${differing.map((k) => `${end?.[k]} ${k}`).join(", ")}, but the file holds ${differing.map((k) => `${read[k]} ${k}`).join(", ")}: lines are missing or were added`
      })
    }
    return { header, sessions, revisions, messages, counts: end } satisfies ReadExport
  })

/**
 * The `ImportNotes` requests for a file, in order. A note's revisions stay in one batch (one
 * transaction) unless the note alone passes a batch's bounds; then it is sent in consecutive
 * parts, oldest revisions first, each extending what the previous part restored. Each batch
 * carries the sessions its revisions were logged in and their ancestors, parents first, as the
 * file has them (restoring a session twice is harmless: it is reused).
 */
export const importBatches = (file: ReadExport): ReadonlyArray<ImportNotesRequest> => {
  const sessionsById = new Map(file.sessions.map((s) => [s.session.id.toLowerCase(), s]))
  const order = new Map(file.sessions.map((s, i) => [s.session.id.toLowerCase(), i]))
  const byNote = new Map<string, Array<ImportedRevision>>()
  for (const r of file.revisions) {
    const key = r.revision.note_id.toLowerCase()
    const group = byNote.get(key) ?? []
    group.push(r)
    byNote.set(key, group)
  }
  const size = (r: ImportedRevision) => JSON.stringify(r).length
  const batches: Array<Array<ImportedRevision>> = []
  let current: Array<ImportedRevision> = []
  let chars = 0
  const close = () => {
    if (current.length > 0) batches.push(current)
    current = []
    chars = 0
  }
  for (const group of byNote.values()) {
    const groupChars = group.reduce((n, r) => n + size(r), 0)
    const fits =
      current.length + group.length <= MAX_IMPORT_BATCH_REVISIONS && chars + groupChars <= MAX_IMPORT_BATCH_CHARS
    if (!fits) close()
    for (const r of [...group].sort((a, b) => a.revision.revision - b.revision.revision)) {
      if (
        current.length >= MAX_IMPORT_BATCH_REVISIONS ||
        (current.length > 0 && chars + size(r) > MAX_IMPORT_BATCH_CHARS)
      ) {
        close()
      }
      current.push(r)
      chars += size(r)
    }
  }
  close()
  return batches.map((revisions) => {
    const wanted = new Set<string>()
    const addWithAncestors = (id: string) => {
      let next: string | null = id.toLowerCase()
      while (next !== null && !wanted.has(next)) {
        const session: ImportedSession | undefined = sessionsById.get(next)
        if (session === undefined) return
        wanted.add(next)
        next = session.session.parent_session_id?.toLowerCase() ?? null
      }
    }
    for (const r of revisions) addWithAncestors(r.revision.session_id)
    const sessions = [...wanted]
      .sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
      .flatMap((id) => {
        const s = sessionsById.get(id)
        return s === undefined ? [] : [s]
      })
    return { sessions, revisions }
  })
}
