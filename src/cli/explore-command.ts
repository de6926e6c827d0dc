import * as NodePath from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Context, Effect, Option } from "effect"
import { UNBOUNDED } from "../domain/read-bounds.js"
import { ExitCode } from "../domain/report.js"
import { type ExploreFailure, INTERRUPTED_EXIT_CODE, unexpectedFailure } from "../explore/explore-failure.js"
import { type ExploreView, exploreFile } from "../explore/explore-file.js"
import { listTranscripts } from "../explore/list-transcripts.js"
import { renderFile, renderList } from "../explore/render-explore-text.js"
import { stringifyForTerminal } from "../explore/terminal-json.js"
import { sanitizeForTerminal } from "../installer/render-text.js"
import { Paths } from "../paths/paths.js"
import { defaultTargets, targetsUnder } from "../transcripts/discovery.js"
import { describeHomes, describeSessionFolders, TRANSCRIPT_FORMATS } from "../transcripts/formats/registry.js"
import { boundedOption, choiceOption } from "./checked-options.js"
import { ExitStatus } from "./exit-status.js"
import { commandDescription } from "./help.js"
import { OutputMode } from "./output-mode.js"
import { CliUsageError } from "./usage-error.js"

const DEFAULT_LIST_LIMIT = 20
const DEFAULT_FILE_LIMIT = 20

const agents = TRANSCRIPT_FORMATS.map((f) => f.label).join(", ")

const path = Args.text({ name: "path" }).pipe(
  Args.withDescription(
    `A transcript to show (${agents}; its format is recognised from its name and first line). Without it, explore lists the newest transcripts.`
  ),
  Args.optional
)
const view = choiceOption(
  "view",
  ["messages", "raw", "preview"],
  "What to show of PATH: messages (every candidate message, injected context included), raw (every record with its type and decision) or preview (the proposed index decisions, with reasons). Default: the conversation, turn by turn."
).pipe(Options.optional)
const details = Options.boolean("details").pipe(
  Options.withDescription("With --view preview, the decision for every record; with --view raw, every record's values.")
)
/** A line number or a count: 1 or more (explore pages through a file, so no upper bound). */
const POSITIVE = { min: 1, max: UNBOUNDED } as const
const startLine = boundedOption(
  "start-line",
  POSITIVE,
  "Start at this line of PATH (1 is the first); every page ends with the --start-line of the next. Default: 1."
).pipe(Options.withPseudoName("LINE"), Options.optional)
const limit = boundedOption(
  "limit",
  POSITIVE,
  `How many to show: transcripts in the list (default ${DEFAULT_LIST_LIMIT}); for PATH, records with --view raw or messages and complete turns otherwise (default ${DEFAULT_FILE_LIMIT}).`
).pipe(Options.optional)
const folders = describeSessionFolders()
const homes = describeHomes()

const root = Options.text("root").pipe(
  Options.withPseudoName("AGENT_HOME"),
  Options.withDescription(
    `List the transcripts under this agent home instead (${folders}). Default: each agent's own home (${homes}). Only without PATH.`
  ),
  Options.optional
)

const agent = choiceOption(
  "agent",
  TRANSCRIPT_FORMATS.map((f) => f.agent),
  `List only this agent's transcripts (${TRANSCRIPT_FORMATS.map((f) => `${f.agent}: ${f.label}`).join(", ")}). Default: every agent. Only without PATH.`
).pipe(Options.optional)

const usage = (message: string) => Effect.fail(new CliUsageError({ message }))

const positive = (name: string, value: Option.Option<number>, fallback: number) =>
  Option.match(value, {
    onNone: () => Effect.succeed(fallback),
    onSome: (n) => (Number.isInteger(n) && n >= 1 ? Effect.succeed(n) : usage(`--${name} must be a whole number ≥ 1`))
  })

/** Removes explore's SIGINT handler (see `exitOnFirstSigint`). */
class SigintGuard extends Context.Tag("blctx/ExploreSigintGuard")<
  SigintGuard,
  { readonly disarm: Effect.Effect<void> }
>() {}

const disarmSigint = Effect.flatMap(SigintGuard, (guard) => guard.disarm)

const report = (failure: ExploreFailure) =>
  Effect.gen(function* () {
    yield* disarmSigint
    const mode = yield* OutputMode
    yield* Console.error(`blctx explore: ${sanitizeForTerminal(failure.message)}`)
    yield* Console.error(`  fix: ${sanitizeForTerminal(failure.remediation)}`)
    if (mode.json) {
      yield* Console.log(
        stringifyForTerminal({
          error: { _tag: failure._tag, message: failure.message, path: failure.path, remediation: failure.remediation },
          exit_code: ExitCode.failed
        })
      )
    }
    yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
  })

/**
 * The first SIGINT ends explore at once with exit code 130, even in the middle of a read: explore
 * only reads, so there is nothing to finish or undo. The process exits from the signal handler
 * itself rather than by interrupting the command, so nothing slow to return can hold it up, and
 * with `--json` the interruption is still one JSON document. The command disarms the handler
 * just before it prints its own document, so there is never a second one.
 */
const exitOnFirstSigint = <A, E, R>(command: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const mode = yield* OutputMode
    const onSigint = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const handler = () => {
          process.stderr.write("blctx explore: interrupted\n")
          if (mode.json) {
            const document = { error: { _tag: "Interrupted", message: "interrupted (SIGINT)" }, exit_code: 130 }
            process.stdout.write(`${stringifyForTerminal(document)}\n`)
          }
          process.exit(INTERRUPTED_EXIT_CODE)
        }
        process.once("SIGINT", handler)
        return handler
      }),
      (handler) => Effect.sync(() => process.removeListener("SIGINT", handler))
    )
    const disarm = Effect.sync(() => process.removeListener("SIGINT", onSigint))
    return yield* Effect.provideService(command, SigintGuard, { disarm })
  }).pipe(Effect.scoped)

/** What an unexpected failure names: the transcript, the listed agent home, or nothing. */
const targetOf = (o: { readonly path: Option.Option<string>; readonly root: Option.Option<string> }) =>
  Option.match(
    Option.orElse(o.path, () => o.root),
    { onNone: () => "", onSome: (p) => NodePath.resolve(p) }
  )

/**
 * `blctx explore`: read-only. Lists transcripts, or shows one file as a conversation, its
 * candidate messages, its raw records, or the proposed index decisions. Creates no state.
 */
export const exploreCommand = Command.make("explore", { path, view, details, startLine, limit, root, agent }, (o) =>
  Effect.gen(function* () {
    const mode = yield* OutputMode
    const out = (json: unknown, text: () => string) =>
      Effect.zipRight(disarmSigint, Console.log(mode.json ? stringifyForTerminal(json) : text()))

    if (Option.isNone(o.path)) {
      if (Option.isSome(o.view)) return yield* usage("--view needs a transcript PATH")
      if (o.details) return yield* usage("--details needs a transcript PATH")
      if (Option.isSome(o.startLine)) return yield* usage("--start-line needs a transcript PATH")
      const n = yield* positive("limit", o.limit, DEFAULT_LIST_LIMIT)
      const paths = yield* Paths
      const formats = Option.match(o.agent, {
        onNone: () => TRANSCRIPT_FORMATS,
        onSome: (a) => TRANSCRIPT_FORMATS.filter((f) => f.agent === a)
      })
      const targets = Option.match(o.root, {
        onNone: () => defaultTargets(paths, formats),
        onSome: (r) => targetsUnder(NodePath.resolve(r), formats)
      })
      const result = yield* listTranscripts(targets, n)
      return yield* out(result, () => renderList(result))
    }

    if (Option.isSome(o.root)) return yield* usage("--root lists transcripts; it cannot be combined with a PATH")
    if (Option.isSome(o.agent)) {
      return yield* usage("--agent narrows the list of transcripts; it cannot be combined with a PATH")
    }
    const n = yield* positive("limit", o.limit, DEFAULT_FILE_LIMIT)
    const from = yield* positive("start-line", o.startLine, 1)
    const chosen: ExploreView = Option.getOrElse(o.view, (): ExploreView => "conversation")
    const result = yield* exploreFile({
      path: NodePath.resolve(o.path.value),
      view: chosen,
      details: o.details,
      startLine: from,
      limit: n
    })
    return yield* out(result, () => renderFile(result, o.details))
  }).pipe(
    // Whatever goes wrong is reported (one JSON document with --json); usage errors go to the CLI's handler.
    Effect.catchAllDefect((defect) => Effect.fail(unexpectedFailure(targetOf(o), defect))),
    Effect.catchTag("ExploreFailure", report),
    exitOnFirstSigint
  )
).pipe(
  Command.withDescription(
    commandDescription(
      "Look at your transcripts and what blctx would index (read-only)",
      "Without PATH, lists the newest transcripts of every agent blctx reads, under each one's home, with their size, time, session id and working directory. With PATH, shows that transcript as a conversation, or in the --view you choose; every record carries its line number and byte range. Creates no state and starts nothing; symbolic links are never followed."
    )
  )
)
