import { Command } from "@effect/cli"
import { Effect } from "effect"
import { quoteValue } from "../domain/decode-issues.js"
import { ListNotesRequest, NoteHistoryRequest } from "../notes/notes-contract.js"
import { commandDescription } from "./help.js"
import { emit, handled, pretty, withDaemon } from "./history-commands.js"
import { renderNoteHistory, renderNoteShow, renderNotesList } from "./notes-render.js"
import { DIRECTORY_FIELD, requestArgument, requestOptions } from "./request-options.js"
import { CliUsageError } from "./usage-error.js"

// `blctx notes list|show|history`: the notes agents logged, read through the daemon like the
// other history commands (JSON by default, `--pretty` for people, exit 1 with a JSON error).

/** The note id, decoded with the procedure's own schema: a malformed one is a usage error, not a daemon call. */
const request = requestArgument(NoteHistoryRequest, "note_id", {
  help: "The note's id (a UUID): note_id in blctx notes list, search results or log_update's answer.",
  refused: (id) => `note id ${quoteValue(id)} is not a UUID (8-4-4-4-12 hexadecimal digits)`
})

const listCommand = Command.make(
  "list",
  {
    request: requestOptions(ListNotesRequest, {
      limit: {},
      offset: {},
      project: DIRECTORY_FIELD,
      session_id: { name: "session", pseudo: "CONTEXT_SESSION_ID" }
    }),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* withDaemon((client) => client.ListNotes(o.request))
        yield* emit(response, (r) => r, renderNotesList, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    "Notes newest change first, each at its current revision: note_id, revision, kind, tags, updated_at, session and an excerpt."
  )
)

const showCommand = Command.make("show", { request, pretty }, (o) =>
  handled(
    Effect.gen(function* () {
      const history = yield* withDaemon((client) => client.NoteHistory(o.request))
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

const historyCommand = Command.make("history", { request, pretty }, (o) =>
  handled(
    Effect.gen(function* () {
      const history = yield* withDaemon((client) => client.NoteHistory(o.request))
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
