import { Args, Command, Options } from "@effect/cli"
import { Effect, Option, Schema } from "effect"
import { quoteValue } from "../domain/decode-issues.js"
import { LIST_NOTES_BOUNDS } from "../domain/read-bounds.js"
import { NoteHistoryRequest } from "../notes/notes-contract.js"
import { boundedOption } from "./checked-options.js"
import { commandDescription } from "./help.js"
import { emit, handled, pretty, withDaemon } from "./history-commands.js"
import { renderNoteHistory, renderNoteShow, renderNotesList } from "./notes-render.js"
import { CliUsageError } from "./usage-error.js"

// `blctx notes list|show|history`: the notes agents logged, read through the daemon like the
// other history commands (JSON by default, `--pretty` for people, exit 1 with a JSON error).

const noteId = Args.text({ name: "note-id" }).pipe(
  Args.withDescription("The note's id (a UUID): note_id in blctx notes list, search results or log_update's answer.")
)

/** The note id decoded with the procedure's own schema: a malformed one is a usage error, not a daemon call. */
const historyRequest = (id: string) =>
  Schema.decodeUnknown(NoteHistoryRequest)({ note_id: id }).pipe(
    Effect.mapError(
      () => new CliUsageError({ message: `note id ${quoteValue(id)} is not a UUID (8-4-4-4-12 hexadecimal digits)` })
    )
  )

const listCommand = Command.make(
  "list",
  {
    limit: boundedOption(
      "limit",
      LIST_NOTES_BOUNDS.limit,
      `At most N notes (${LIST_NOTES_BOUNDS.limit.min} to ${LIST_NOTES_BOUNDS.limit.max}). Default: ${LIST_NOTES_BOUNDS.limit.fallback}.`
    ).pipe(Options.withDefault(LIST_NOTES_BOUNDS.limit.fallback)),
    offset: boundedOption(
      "offset",
      LIST_NOTES_BOUNDS.offset,
      `Skip the first N notes, to page on (next_offset). Default: ${LIST_NOTES_BOUNDS.offset.fallback}.`
    ).pipe(Options.withDefault(LIST_NOTES_BOUNDS.offset.fallback)),
    project: Options.text("project").pipe(
      Options.withPseudoName("DIR"),
      Options.withDescription("Only notes of this project directory or a directory under it."),
      Options.optional
    ),
    session: Options.text("session").pipe(
      Options.withPseudoName("CONTEXT_SESSION_ID"),
      Options.withDescription("Only notes whose current revision was written in this blctx session."),
      Options.optional
    ),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* withDaemon((client) =>
          client.listNotes({
            limit: o.limit,
            offset: o.offset,
            ...Option.match(o.project, { onNone: () => ({}), onSome: (project) => ({ project }) }),
            ...Option.match(o.session, { onNone: () => ({}), onSome: (session_id) => ({ session_id }) })
          })
        )
        yield* emit(response, (r) => r, renderNotesList, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    "Notes newest change first, each at its current revision: note_id, revision, kind, tags, updated_at, session and an excerpt."
  )
)

const showCommand = Command.make("show", { noteId, pretty }, (o) =>
  handled(
    Effect.gen(function* () {
      const request = yield* historyRequest(o.noteId)
      const history = yield* withDaemon((client) => client.noteHistory(request))
      const current = history.revisions.at(-1)
      yield* emit(
        history,
        (h) => ({ note_id: h.note_id, kind: h.kind, revisions: h.revisions.length, current: current ?? null }),
        renderNoteShow,
        o.pretty
      )
    }),
    o.pretty
  )
).pipe(Command.withDescription("The note's current revision in full, with its metadata and how many revisions it has."))

const historyCommand = Command.make("history", { noteId, pretty }, (o) =>
  handled(
    Effect.gen(function* () {
      const request = yield* historyRequest(o.noteId)
      const history = yield* withDaemon((client) => client.noteHistory(request))
      yield* emit(history, (h) => h, renderNoteHistory, o.pretty)
    }),
    o.pretty
  )
).pipe(Command.withDescription("Every revision of the note, oldest first, with its time, authorship and session."))

export const notesCommand = Command.make("notes", {}, () =>
  Effect.fail(new CliUsageError({ message: "give a notes command: list, show NOTE_ID or history NOTE_ID" }))
).pipe(
  Command.withDescription(
    commandDescription(
      "List and read the notes agents logged",
      "Each prints one JSON document unless --pretty (or a terminal); a note id that names no note exits 1 with a JSON error. Agents change notes with the MCP tool update_note; search and recent show only a note's current revision; context shows the revision its context_id names (notes history gives each revision's)."
    )
  ),
  Command.withSubcommands([listCommand, showCommand, historyCommand])
)
