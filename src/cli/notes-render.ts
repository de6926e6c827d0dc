import type { Style } from "../installer/render-text.js"
import type { ListNotesResponse, NoteHistoryResponse, NoteRevisionEntry } from "../notes/notes-contract.js"
import { sanitizeDeep } from "../terminal/sanitize.js"

/**
 * Readable renderings of the notes commands (`--pretty`). Like `history-render.ts`, each first
 * passes the whole answer through `sanitizeDeep`, so no stored string (text, tags, ids, project)
 * reaches the terminal with a control character in it.
 */

const when = (ts: string) => ts.replace("T", " ").replace(/\.\d+Z$|Z$/, "Z")

const oneLine = (text: string, max = 200) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const tagList = (tags: ReadonlyArray<string>) => (tags.length === 0 ? "" : `  [${tags.join(", ")}]`)

export const renderNotesList = (answer: ListNotesResponse, style: Style): string => {
  const r = sanitizeDeep(answer)
  const count = `${r.notes.length} ${r.notes.length === 1 ? "note" : "notes"}`
  const lines = [style.bold(count) + style.dim(" (newest change first)")]
  for (const note of r.notes) {
    lines.push(
      `${style.bold(when(note.updated_at))}  ${note.kind}  revision ${note.current_revision}${tagList(note.tags)}  ${style.dim(note.project ?? "no project")}`
    )
    lines.push(`   ${oneLine(note.excerpt)}${note.excerpt_truncated ? "…" : ""}`)
    lines.push(style.dim(`   note ${note.note_id}  session ${note.session_id}`))
  }
  if (r.next_offset !== null) lines.push(style.dim(`More: --offset ${r.next_offset}`))
  return lines.join("\n")
}

const revisionLines = (revision: NoteRevisionEntry, style: Style, current: boolean): ReadonlyArray<string> => [
  `${style.bold(`revision ${revision.revision}`)}${current ? style.yellow(" (current)") : ""}  ${when(revision.created_at)}  ${revision.authorship}${tagList(revision.tags)}`,
  style.dim(`session ${revision.session_id}  update ${revision.update_id}  context ${revision.context_id}`),
  revision.text,
  ...(revision.source_text === null ? [] : [style.dim(`source: ${oneLine(revision.source_text, 400)}`)])
]

/** `notes show`: the current revision in full, and how many revisions there are. */
export const renderNoteShow = (answer: NoteHistoryResponse, style: Style): string => {
  const r = sanitizeDeep(answer)
  const current = r.revisions.at(-1)
  const older = r.revisions.length - 1
  return [
    style.bold(`Note ${r.note_id}`) +
      style.dim(`  ${r.kind}, ${r.revisions.length} revision${r.revisions.length === 1 ? "" : "s"}`),
    ...(current === undefined ? [] : revisionLines(current, style, true)),
    ...(older > 0 ? [style.dim(`${older} older: blctx notes history ${r.note_id}`)] : [])
  ].join("\n")
}

/** `notes history`: every revision, oldest first. */
export const renderNoteHistory = (answer: NoteHistoryResponse, style: Style): string => {
  const r = sanitizeDeep(answer)
  const lines = [style.bold(`Note ${r.note_id}`) + style.dim(`  ${r.kind}, current revision ${r.current_revision}`)]
  for (const revision of r.revisions) {
    lines.push("", ...revisionLines(revision, style, revision.revision === r.current_revision))
  }
  return lines.join("\n")
}
