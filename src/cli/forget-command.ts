import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect } from "effect"
import { withDaemon } from "../daemon/ensure-daemon.js"
import { ExitCode } from "../domain/report.js"
import { type ForgetSelector, SelectorFields, selectorKind } from "../forget/forget-contract.js"
import { ansiStyle, plainStyle } from "../installer/render-text.js"
import { sanitizeForTerminal, stringifyForTerminal } from "../terminal/sanitize.js"
import { ExitStatus } from "./exit-status.js"
import { renderForgetPreview, renderForgotten } from "./forget-render.js"
import { commandDescription } from "./help.js"
import { OutputMode } from "./output-mode.js"
import { Prompter } from "./prompter.js"
import { requestOptions, TIME_FORMAT } from "./request-options.js"
import { CliUsageError } from "./usage-error.js"

/** A preview answers quickly; a confirmation includes the scrub (VACUUM), which grows with the database. */
const PREVIEW_TIMEOUT = Duration.seconds(30)
const FORGET_TIMEOUT = Duration.minutes(10)

export const NOTHING_REMOVED = "nothing removed: run again with --yes to forget this"

/**
 * The selector's options, derived from its fields, worded for a person forgetting (the schema's
 * descriptions speak to agents). Times stay text the daemon reads, as the MCP tool's do; paths
 * are made absolute here, where the working directory is the person's.
 */
const selectorFields = requestOptions(SelectorFields, {
  note: { pseudo: "NOTE_ID", help: "Forget one note, every revision of it." },
  context_session: {
    pseudo: "ID",
    help: "Forget every note of one blctx session (the context_session_id open_session returned)."
  },
  file: { pseudo: "PATH", absolute: true, help: "Forget every message read from this transcript file." },
  session: { pseudo: "ID", help: "Forget every message of this agent session (any agent, every file of it)." },
  project: {
    pseudo: "DIR",
    absolute: true,
    help: "Forget the transcript messages whose working directory is DIR or below it, and the notes of blctx sessions whose project is."
  },
  since: { pseudo: "TIME", help: `Forget from this time on (inclusive); with or without --until. ${TIME_FORMAT}` },
  until: { pseudo: "TIME", help: `Forget before this time (exclusive); with or without --since. ${TIME_FORMAT}` }
})

const options = {
  fields: selectorFields,
  yes: Options.boolean("yes").pipe(
    Options.withDescription("Confirm without asking: the preview is still made, then confirmed with its token.")
  ),
  pretty: Options.boolean("pretty").pipe(
    Options.withDescription("Print for people instead of JSON (the default when stdout is a terminal).")
  )
}

/** The selector the options name: exactly one kind, in the command line's words when not. */
export const selectorOf = (fields: typeof SelectorFields.Type): Effect.Effect<ForgetSelector, CliUsageError> =>
  selectorKind(fields) === undefined
    ? Effect.fail(
        new CliUsageError({
          message:
            "name exactly one thing to forget: --note, --context-session, --file, --session, --project, or --since/--until"
        })
      )
    : Effect.succeed(fields)

const fail = (error: Error) =>
  Effect.gen(function* () {
    yield* Console.error(`blctx: ${sanitizeForTerminal(error.message)}`)
    const remediation = "remediation" in error ? String(error.remediation) : undefined
    if (remediation !== undefined) yield* Console.error(sanitizeForTerminal(remediation))
    const mode = yield* OutputMode
    if (mode.json || process.stdout.isTTY !== true) {
      const tag = "_tag" in error ? String(error._tag) : "Error"
      const document = {
        error: { _tag: tag, message: error.message, ...(remediation === undefined ? {} : { remediation }) },
        exit_code: ExitCode.failed
      }
      yield* Console.log(stringifyForTerminal(document, undefined))
    }
    yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
  })

export const forgetCommand = Command.make("forget", options, (o) =>
  Effect.gen(function* () {
    const selector = yield* selectorOf(o.fields)
    const mode = yield* OutputMode
    const readable = !mode.json && (o.pretty || process.stdout.isTTY === true)
    const style = mode.color ? ansiStyle : plainStyle
    const preview = yield* withDaemon(PREVIEW_TIMEOUT, (client) => client.ForgetPreview({ selector }))

    let confirmed = o.yes
    if (!confirmed && mode.interactive) {
      yield* Console.log(renderForgetPreview(preview, style))
      if (preview.counts.messages + preview.counts.capture_bindings + preview.counts.capture_events === 0) {
        yield* Console.log("Nothing matches: nothing to forget.")
        return
      }
      confirmed = yield* Effect.flatMap(Prompter, (p) => p.confirm("Forget all of this? It cannot be undone.", false))
      if (!confirmed) {
        yield* Console.error("blctx: nothing removed")
        return yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
      }
    }
    if (!confirmed) {
      yield* Console.log(
        readable ? renderForgetPreview(preview, style) : stringifyForTerminal({ preview, forgotten: null })
      )
      yield* Console.error(`blctx: ${NOTHING_REMOVED}`)
      return yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
    }
    const forgotten = yield* withDaemon(FORGET_TIMEOUT, (client) => client.Forget({ selector, token: preview.token }))
    if (readable) {
      if (!mode.interactive || o.yes) yield* Console.log(renderForgetPreview(preview, style))
      yield* Console.log(renderForgotten(forgotten, style))
    } else yield* Console.log(stringifyForTerminal({ preview, forgotten }))
  }).pipe(Effect.catchAll((e) => (e instanceof CliUsageError ? Effect.fail(e) : fail(e))))
).pipe(
  Command.withDescription(
    commandDescription(
      "Forget part of your history, after a preview",
      "Name exactly one thing: a note, a blctx session, a transcript file, an agent session, a project, or a time range. blctx first shows what would be removed (counts by source and the first items with their citations); on a terminal it asks before removing, otherwise --yes confirms. Removal takes the messages, chunks, search index entries, vectors and capture entries, records a tombstone (what was forgotten, when and how much, never the text) so importing the transcript again does not bring it back, and rewrites the database so the text is not left in the file. Without --yes and without a terminal nothing is removed and the command exits 1."
    )
  )
)
