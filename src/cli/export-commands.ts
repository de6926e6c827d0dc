import { createReadStream } from "node:fs"
import * as NodePath from "node:path"
import { createInterface } from "node:readline"
import { Args, Command } from "@effect/cli"
import { Console, Data, DateTime, Duration, Effect, Option, Stream } from "effect"
import { withDaemon as ensureDaemon } from "../daemon/ensure-daemon.js"
import { ExitCode } from "../domain/report.js"
import { importBatches, readExportFile } from "../export/export-file.js"
import type { ImportNotesResponse } from "../export/import-contract.js"
import { SafeFs } from "../fs/safe-fs.js"
import {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  EXPORT_START,
  type ExportCounts,
  type ExportCursor,
  ExportFilters,
  type ExportLine,
  encodeExportValue
} from "../retrieval/export-format.js"
import type { BlctxClient } from "../rpc/client.js"
import { CURRENT_SCHEMA_VERSION } from "../store/migrations.js"
import { sanitizeForTerminal, stringifyForTerminal } from "../terminal/sanitize.js"
import { CLOSED_STDOUT_EXIT, isClosedPipe } from "./closed-stdout.js"
import { ExitStatus } from "./exit-status.js"
import { commandDescription } from "./help.js"
import { OutputMode } from "./output-mode.js"
import { AGENT_FIELD, requestOptions, TIME_FIELD } from "./request-options.js"
import { CliUsageError } from "./usage-error.js"

/** Every call to the daemon (one export page, one import batch) answers within this. */
const CALL_TIMEOUT = Duration.seconds(30)
/** Items per export page. */
const EXPORT_PAGE_ITEMS = 500
/** Problems listed in the summary; the counts cover all of them. */
const LISTED_PROBLEMS = 100

const withDaemon = <A, E extends Error>(use: (client: BlctxClient) => Effect.Effect<A, E>) =>
  ensureDaemon(CALL_TIMEOUT, use)

const failed = Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))

/**
 * Writes to stdout and waits until Node has taken it (the callback), so a slow reader (a pipe
 * into `import-notes`, a full disk) holds the export back instead of filling memory.
 */
const writeStdout = (text: string) =>
  Effect.async<void, StdoutClosed>((resume) => {
    process.stdout.write(text, (error) =>
      resume(
        error == null
          ? Effect.void
          : Effect.fail(new StdoutClosed({ reason: error.message, closed: isClosedPipe(error) }))
      )
    )
  })

/**
 * While exporting, a reader that goes away (EPIPE: `blctx export | head`) is reported by the
 * failing write's callback; the stream's own error event must not also crash the process.
 */
const stdoutErrorsHandled = Effect.acquireRelease(
  Effect.sync(() => {
    const ignore = () => undefined
    process.stdout.on("error", ignore)
    return ignore
  }),
  (ignore) => Effect.sync(() => process.stdout.off("error", ignore))
)

class StdoutClosed extends Data.TaggedError("StdoutClosed")<{
  readonly reason: string
  /** The reader went away (EPIPE): the program ends quietly (`closed-stdout.ts`), not with an error. */
  readonly closed: boolean
}> {
  override get message() {
    return `could not write the export to stdout: ${this.reason}`
  }
}

/** A path `import-notes` will not read (lstat, never following a link). */
class UnreadableExport extends Data.TaggedError("UnreadableExport")<{
  readonly path: string
  readonly problem: string
}> {
  override get message() {
    return `${sanitizeForTerminal(this.path)} ${this.problem}; nothing was imported`
  }
}

// ---- export ------------------------------------------------------------------------------------

const filters = requestOptions(ExportFilters, { since: TIME_FIELD, until: TIME_FIELD, agent: AGENT_FIELD })

/**
 * Export failures go to stderr only: stdout is the JSONL stream, never a JSON error document. A
 * reader that went away (`blctx export | head`) is no failure to report: exit 141, quietly, as
 * every command does (`closed-stdout.ts`).
 */
const reportExportFailure = (error: Error) =>
  error instanceof StdoutClosed && error.closed
    ? Effect.flatMap(ExitStatus, (s) => s.set(CLOSED_STDOUT_EXIT))
    : Console.error(`blctx: ${sanitizeForTerminal(error.message)}`).pipe(Effect.zipRight(failed))

/** One line of the file; text a terminal could act on is escaped (valid JSON all the same). */
const jsonLine = (line: ExportLine) => `${stringifyForTerminal(encodeExportValue(line), 0)}\n`

const runExport = (client: BlctxClient, filters: ExportFilters) =>
  Effect.gen(function* () {
    yield* stdoutErrorsHandled
    const identity = yield* client.Ping()
    // The first page before the header: a filter the daemon refuses writes nothing.
    let page = yield* client.ExportPage({ cursor: EXPORT_START, limit: EXPORT_PAGE_ITEMS, filters })
    const exportedAt = DateTime.formatIso(yield* DateTime.now)
    yield* writeStdout(
      jsonLine({
        type: "header",
        format: EXPORT_FORMAT,
        format_version: EXPORT_FORMAT_VERSION,
        schema_version: identity.schema_version,
        exported_at: exportedAt,
        installation_id: identity.installation_id,
        filters
      })
    )
    const counts = { context_sessions: 0, notes: 0, note_revisions: 0, messages: 0 }
    let lastNote: string | null = null
    while (true) {
      let text = ""
      for (const item of page.items) {
        text += jsonLine(item)
        if (item.type === "context_session") counts.context_sessions++
        else if (item.type === "message") counts.messages++
        else {
          counts.note_revisions++
          // Revisions come ordered by note: a new note id starts a new note.
          if (item.note_id !== lastNote) counts.notes++
          lastNote = item.note_id
        }
      }
      if (text !== "") yield* writeStdout(text)
      const next: ExportCursor | null = page.next_cursor
      if (next === null) break
      page = yield* client.ExportPage({ cursor: next, limit: EXPORT_PAGE_ITEMS, filters })
    }
    yield* writeStdout(jsonLine({ type: "end", counts: counts satisfies ExportCounts }))
  }).pipe(Effect.scoped)

/**
 * `--json` promises one JSON document; an export is a stream of them (JSON lines), which
 * import-notes reads line by line. Wrapping it in one array would hold the whole history in
 * memory and make a file import-notes could not read, so `--json` is refused instead.
 */
const refuseJson = Effect.flatMap(OutputMode, (mode) =>
  mode.json
    ? Effect.fail(
        new CliUsageError({
          message:
            "export writes JSON lines (one JSON document per line, as import-notes reads them), never one document; leave out --json"
        })
      )
    : Effect.void
)

export const exportCommand = Command.make("export", { filters }, (o) =>
  refuseJson.pipe(
    Effect.zipRight(withDaemon((client) => runExport(client, o.filters)).pipe(Effect.catchAll(reportExportFailure)))
  )
).pipe(
  Command.withDescription(
    commandDescription(
      "Export your notes and indexed history as JSON lines",
      "Writes to stdout, one JSON document per line: a header (format, schema version, installation, filters), the blctx sessions of the exported notes, every revision of every note, each indexed transcript message with its source (the redacted text the index holds, never the raw transcript), and an end line with the counts. Forgotten notes and messages are not in the index, so never in an export. Restore the notes elsewhere with blctx import-notes."
    )
  )
)

// ---- import-notes --------------------------------------------------------------------------------

const fileArg = Args.text({ name: "file" }).pipe(
  Args.withDescription(
    "An export file from blctx export (a regular file; symbolic links are refused), or - for stdin. Default: stdin."
  ),
  Args.optional
)

/** The lines of a regular file (checked with lstat first) or of stdin. */
const linesOf = (source: string | null) =>
  Effect.gen(function* () {
    if (source !== null) {
      const fs = yield* SafeFs
      const entry = yield* fs
        .lstat(source)
        .pipe(Effect.mapError((e) => new UnreadableExport({ path: source, problem: `cannot be examined (${e.code})` })))
      if (Option.isNone(entry)) return yield* new UnreadableExport({ path: source, problem: "does not exist" })
      const kind = entry.value.kind
      if (kind === "symlink") {
        return yield* new UnreadableExport({
          path: source,
          problem: "is a symbolic link, which blctx never follows (give the file it points to)"
        })
      }
      if (kind !== "file") return yield* new UnreadableExport({ path: source, problem: "is not a regular file" })
    }
    return Stream.suspend(() => {
      const input = source === null ? process.stdin : createReadStream(source, { encoding: "utf8" })
      const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
      return Stream.fromAsyncIterable(
        lines,
        (e) => new UnreadableExport({ path: source ?? "stdin", problem: `could not be read (${String(e)})` })
      ).pipe(Stream.ensuring(Effect.sync(() => lines.close())))
    })
  })

interface ImportSummary {
  notes_imported: number
  revisions_imported: number
  already_present: number
  conflicts: number
  refused: number
  held_back: number
  forgotten: number
  messages_skipped: number
  sessions_created: number
  sessions_mapped: number
  problems: Array<ImportNotesResponse["problems"][number]>
  problems_not_listed: number
  messages_note: string
}

/** A failed import-notes: the message on stderr, one JSON document on stdout (as other commands), exit 1. */
const reportImportFailure = (error: Error) =>
  Effect.gen(function* () {
    yield* Console.error(`blctx: ${sanitizeForTerminal(error.message)}`)
    const mode = yield* OutputMode
    if (mode.json || process.stdout.isTTY !== true) {
      const tag = "_tag" in error ? String(error._tag) : "Error"
      const document = { error: { _tag: tag, message: error.message }, exit_code: ExitCode.failed }
      yield* Console.log(stringifyForTerminal(document, undefined))
    }
    yield* failed
  })

export const importNotesCommand = Command.make("import-notes", { file: fileArg }, (o) =>
  Effect.gen(function* () {
    const given = Option.getOrNull(o.file)
    const source = given === null || given === "-" ? null : NodePath.resolve(given)
    if (source === null && process.stdin.isTTY === true) {
      // Nobody types an export: waiting on the terminal would look like a hang.
      return yield* new CliUsageError({
        message: "give an export FILE, or pipe one in: blctx export | blctx import-notes -"
      })
    }
    // The whole file is read and checked before the daemon is asked anything.
    const file = yield* readExportFile(yield* linesOf(source), CURRENT_SCHEMA_VERSION)
    const batches = importBatches(file)
    const summary: ImportSummary = {
      notes_imported: 0,
      revisions_imported: 0,
      already_present: 0,
      conflicts: 0,
      refused: 0,
      held_back: 0,
      forgotten: 0,
      messages_skipped: file.messages,
      sessions_created: 0,
      sessions_mapped: 0,
      problems: [],
      problems_not_listed: 0,
      messages_note:
        "Transcript messages are not imported: index the transcripts themselves (blctx index) to rebuild them."
    }
    yield* withDaemon((client) =>
      Effect.forEach(
        batches,
        (batch) =>
          Effect.map(client.ImportNotes(batch), (r) => {
            summary.notes_imported += r.notes_imported
            summary.revisions_imported += r.revisions_imported
            summary.already_present += r.already_present
            summary.forgotten += r.forgotten
            summary.sessions_created += r.sessions_created
            summary.sessions_mapped += r.sessions_mapped
            for (const p of r.problems) {
              if (p.kind === "conflict") summary.conflicts++
              else if (p.kind === "refused") summary.refused++
              else summary.held_back++
              if (summary.problems.length < LISTED_PROBLEMS) summary.problems.push(p)
              else summary.problems_not_listed++
            }
          }),
        { discard: true }
      )
    )
    yield* Console.log(stringifyForTerminal(summary))
    // Something in the file was not restored: say so with the exit code too.
    if (summary.conflicts + summary.refused + summary.held_back > 0) yield* failed
  }).pipe(Effect.catchAll((e) => (e instanceof CliUsageError ? Effect.fail(e) : reportImportFailure(e))))
).pipe(
  Command.withDescription(
    commandDescription(
      "Restore notes and their histories from an export",
      "Reads a file written by blctx export (or stdin) and restores its notes, every revision with its original ids and times, and their blctx sessions, into this installation. The whole file is checked first: a line that is not valid, a header of another format or a newer version, or a missing end line (a file cut short) fails the command and nothing is imported. Importing the same file again adds nothing. A revision stored here with other content is a conflict and is never overwritten (exit 1, its line named); notes this installation forgot are not restored. Transcript messages are not imported: index the transcripts themselves to rebuild them."
    )
  )
)
