import * as NodePath from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Option, Schema } from "effect"
import { withDaemon as ensureDaemon } from "../daemon/ensure-daemon.js"
import { quoteValue } from "../domain/decode-issues.js"
import { CONTEXT_BOUNDS, type NumberBound, RECENT_BOUNDS, SEARCH_BOUNDS, UNBOUNDED } from "../domain/read-bounds.js"
import { ExitCode } from "../domain/report.js"
import { KNOWN_SOURCE_TYPES } from "../history/source-type.js"
import { ansiStyle, plainStyle, progressBar } from "../installer/render-text.js"
import { JobId, type JobView } from "../jobs/job.js"
import { Paths } from "../paths/paths.js"
import { KNOWN_AGENTS } from "../retrieval/agent-filter.js"
import type { BlctxClient } from "../rpc/client.js"
import { sanitizeForTerminal, stringifyForTerminal } from "../terminal/sanitize.js"
import { defaultTargets, describeTargets, discoverTranscripts, targetsUnder } from "../transcripts/discovery.js"
import { agentLabels, describeHomes, describeSessionFolders } from "../transcripts/formats/registry.js"
import { boundedOption, choiceOption, rangeProblem, TIME_FORMS, timeOption } from "./checked-options.js"
import { ExitStatus } from "./exit-status.js"
import { commandDescription } from "./help.js"
import { renderContext, renderJob, renderRecent, renderStatus } from "./history-render.js"
import { HISTORY_CALL_TIMEOUT_MS, remainingOfCommandDeadline } from "./history-timeout.js"
import { checkTranscriptPaths, UnindexablePaths } from "./index-paths.js"
import { outputWidth, wantsReadable } from "./output-choice.js"
import { OutputMode } from "./output-mode.js"
import { renderSearch } from "./search-render.js"
import { CliUsageError } from "./usage-error.js"

/** Every call of a history command answers within this, or says why not (busy, not answering). */
const CALL_TIMEOUT = Duration.millis(HISTORY_CALL_TIMEOUT_MS)
const WAIT_LIMIT = Duration.minutes(10)
const POLL = Duration.millis(250)

export const pretty = Options.boolean("pretty").pipe(
  Options.withDescription("Print a readable table instead of JSON (the default when stdout is a terminal).")
)

/**
 * JSON unless `--pretty` (or a TTY without `--json`). A readable rendering is given the width to
 * wrap to (`output-choice.ts`, as the search fast path decides it); most ignore it.
 */
export const emit = <A>(
  value: A,
  encode: (a: A) => unknown,
  render: (a: A, style: typeof plainStyle, width: number | undefined) => string,
  wantPretty: boolean
) =>
  Effect.gen(function* () {
    const mode = yield* OutputMode
    const stdoutTty = process.stdout.isTTY === true
    const width = outputWidth({ stdoutTty, columns: process.stdout.columns, env: process.env })
    yield* Console.log(
      wantsReadable(mode.json, wantPretty, stdoutTty)
        ? render(value, mode.color ? ansiStyle : plainStyle, width)
        : stringifyForTerminal(encode(value))
    )
  })

/**
 * A session with the daemon, which is started on demand when it is not running; a daemon that
 * is there but silent is reported about 5 s after the command started.
 */
export const withDaemon = <A, E extends Error>(use: (client: BlctxClient) => Effect.Effect<A, E>) =>
  Effect.suspend(() => ensureDaemon(CALL_TIMEOUT, use, { reachWithin: Duration.millis(remainingOfCommandDeadline()) }))

/**
 * A failed request: the message on stderr, exit 1; and, where the answer would have been JSON
 * (`--json`, or stdout not a terminal without `--pretty`), one JSON document on stdout. With
 * `--pretty` a person reads text, so the error is only the line on stderr.
 */
const reportFailure = (error: Error, wantPretty: boolean) =>
  Effect.gen(function* () {
    yield* Console.error(`blctx: ${sanitizeForTerminal(error.message)}`)
    const mode = yield* OutputMode
    if (mode.json || (!wantPretty && process.stdout.isTTY !== true)) {
      const tag = "_tag" in error ? String(error._tag) : "Error"
      const details = error instanceof UnindexablePaths ? { paths: error.paths } : {}
      const document = { error: { _tag: tag, message: error.message, ...details }, exit_code: ExitCode.failed }
      // A path given on the command line may hold controls JSON.stringify leaves raw.
      yield* Console.log(stringifyForTerminal(document, undefined))
    }
    yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
  })

/** A command's failures reported (`reportFailure`); usage errors go on to the program (exit 2). */
export const handled = <E extends Error, R>(effect: Effect.Effect<void, E, R>, wantPretty: boolean) =>
  effect.pipe(Effect.catchAll((e) => (e instanceof CliUsageError ? Effect.fail(e) : reportFailure(e, wantPretty))))

// ---- index -----------------------------------------------------------------------------------

const indexPaths = Args.text({ name: "path" }).pipe(
  Args.withDescription(
    `Transcript files to index (${agentLabels()}), each an existing regular file (symbolic links are refused). Without any, every transcript of every agent is indexed, each under its agent's home (${describeHomes()}).`
  ),
  Args.repeated
)
const root = Options.text("root").pipe(
  Options.withPseudoName("AGENT_HOME"),
  Options.withDescription(
    `Index every transcript under this agent home instead, each agent's in its own folders (${describeSessionFolders()}). Default: each agent's own home. Not with PATH.`
  ),
  Options.optional
)
const wait = Options.boolean("wait").pipe(
  Options.withDescription(
    "Follow the job until it finishes, for up to ten minutes (progress on stderr); exit 1 if it failed or was cancelled."
  )
)

/** A poll that fails for want of an answer is asked again: reading a job's state is safe to repeat. */
const POLL_ATTEMPTS = 3

const follow = (client: BlctxClient, job: JobView) =>
  Effect.gen(function* () {
    const tty = process.stderr.isTTY === true
    let current = job
    while (current.state === "queued" || current.state === "running") {
      if (tty) {
        const total = current.progress_total ?? 0
        const bar = progressBar({
          label: `${current.progress_done}/${total} files`,
          ...(total > 0 ? { fraction: current.progress_done / total } : {})
        })
        process.stderr.write(`\r\u001b[2K${bar}`)
      }
      yield* Effect.sleep(POLL)
      current = yield* client
        .jobStatus(current.id)
        .pipe(Effect.retry({ times: POLL_ATTEMPTS - 1, while: (e) => e._tag === "DaemonUnavailable" }))
    }
    if (tty) process.stderr.write("\r\u001b[2K")
    return current
  }).pipe(
    Effect.timeoutTo({
      duration: WAIT_LIMIT,
      onSuccess: Effect.succeed,
      onTimeout: () =>
        Console.error(
          `blctx: job ${job.id} is still running after ten minutes; it continues in the daemon. Inspect it with: blctx index-status ${job.id}`
        ).pipe(Effect.zipRight(client.jobStatus(job.id)))
    }),
    Effect.flatten
  )

/** Submits one import job (once: never retried) and, with `wait`, follows it to its end. */
export const submitImport = (client: BlctxClient, files: ReadonlyArray<string>, wait: boolean) =>
  Effect.gen(function* () {
    const submitted = yield* client.submitJob({ kind: "import", params: { paths: files, origin: "cli" } })
    return wait ? yield* follow(client, submitted.job) : submitted.job
  })

export const indexCommand = Command.make("index", { paths: indexPaths, root, wait, pretty }, (o) =>
  handled(
    Effect.gen(function* () {
      if (o.paths.length > 0 && Option.isSome(o.root)) {
        return yield* new CliUsageError({ message: "give transcript paths or --root, not both" })
      }
      const paths = yield* Paths
      let files: ReadonlyArray<string>
      if (o.paths.length > 0) {
        files = o.paths.map((p) => NodePath.resolve(p))
        // Before the daemon is asked anything: a path that cannot be indexed fails the whole command.
        yield* checkTranscriptPaths(files)
      } else {
        // Every registered transcript format, at its agent's home or under --root.
        const targets = Option.match(o.root, {
          onNone: () => defaultTargets(paths),
          onSome: (r) => targetsUnder(NodePath.resolve(r))
        })
        const found = yield* discoverTranscripts(targets)
        files = found.files.map((f) => f.path)
        if (files.length === 0) {
          return yield* new CliUsageError({ message: `no transcripts under ${describeTargets(targets)}` })
        }
      }
      const job = yield* withDaemon((client) => submitImport(client, files, o.wait))
      yield* emit(job, (j) => ({ job: j }), renderJob, o.pretty)
      if (job.state === "failed" || job.state === "cancelled" || job.state === "superseded") {
        yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
      }
    }),
    o.pretty
  )
).pipe(
  Command.withDescription(
    commandDescription(
      "Index transcripts into your searchable history",
      "Submits one durable import job to the daemon (starting it when needed) and prints the job at once. Unchanged files are skipped and growing ones are read from where they stopped, so reruns are cheap. If any PATH does not exist or is not a regular file, nothing is submitted and the command fails naming every such path."
    )
  )
)

const jobIdArg = Args.text({ name: "job-id" }).pipe(
  Args.withDescription("A job id, as blctx index printed it. Without it, what the whole index covers."),
  Args.optional
)

export const indexStatusCommand = Command.make("index-status", { jobId: jobIdArg, pretty }, (o) =>
  handled(
    Option.match(o.jobId, {
      onNone: () =>
        withDaemon((client) => client.contextStatus()).pipe(
          Effect.flatMap((status) => emit(status, (s) => s, renderStatus, o.pretty))
        ),
      onSome: (id) =>
        Effect.gen(function* () {
          const jobId = yield* Schema.decodeUnknown(JobId)(id).pipe(
            Effect.mapError(() => new CliUsageError({ message: `${quoteValue(id)} is not a job id` }))
          )
          const job = yield* withDaemon((client) => client.jobStatus(jobId))
          yield* emit(job, (j) => ({ job: j }), renderJob, o.pretty)
        })
    }),
    o.pretty
  )
).pipe(
  Command.withDescription(
    commandDescription(
      "Show what the index covers, or the state of one job",
      "Without JOB_ID: the files, sessions, messages, chunks and vectors indexed, changed or missing sources, whether search can use vectors, and the recent jobs. With JOB_ID: that job's state and counts."
    )
  )
)

// ---- search, recent, context -------------------------------------------------------------------

/** The range in a description: `1 to 100`, or `0 or more`. */
const range = (bound: NumberBound) =>
  bound.max === UNBOUNDED ? `${bound.min} or more` : `${bound.min} to ${bound.max}`

const limit = (bound: NumberBound & { readonly fallback: number }, what: string) =>
  boundedOption("limit", bound, `How many ${what} to return, ${range(bound)}. Default: ${bound.fallback}.`).pipe(
    Options.withDefault(bound.fallback)
  )
const offset = (bound: NumberBound & { readonly fallback: number }, what: string) =>
  boundedOption(
    "offset",
    bound,
    `Skip this many ${what} first, to get the next page (an answer's next_offset says where it continues). Default: ${bound.fallback}.`
  ).pipe(Options.withDefault(bound.fallback))
const project = Options.text("project").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Only sessions whose working directory is DIR or a directory below it."),
  Options.optional
)
const TIME_FORMAT = `TIME is ${TIME_FORMS}; without an offset it is UTC.`
const since = timeOption("since", `Only from this time on (inclusive). ${TIME_FORMAT}`).pipe(Options.optional)
const until = timeOption("until", `Only before this time (exclusive). ${TIME_FORMAT}`).pipe(Options.optional)
/** `--agent`: the known agents are the choices, so a misspelt one is a usage error listing them. */
const agent = (what: string) =>
  choiceOption(
    "agent",
    KNOWN_AGENTS,
    `Only ${what} of this agent: codex (Codex) or claude (Claude Code). Notes written for blctx stay unless their session belongs to another agent. Default: every agent.`
  ).pipe(Options.optional)
const optional = <A>(o: Option.Option<A>) => Option.getOrUndefined(o)

/** An empty `[--since, --until)` range is a usage error, found before the daemon is asked. */
const checkRange = (since: Option.Option<string>, until: Option.Option<string>) => {
  const problem = rangeProblem(optional(since), optional(until))
  return problem === undefined ? Effect.void : Effect.fail(new CliUsageError({ message: problem }))
}
const defined = <T extends Record<string, unknown>>(record: T) =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>
  }

export const searchCommand = Command.make(
  "search",
  {
    query: Args.text({ name: "query" }).pipe(
      Args.withDescription("The words to look for; several words form one query (quotes are not needed)."),
      Args.repeated
    ),
    limit: limit(SEARCH_BOUNDS.limit, "results"),
    offset: offset(SEARCH_BOUNDS.offset, "results"),
    project,
    session: Options.text("session").pipe(
      Options.withPseudoName("ID"),
      Options.withDescription("Only this session, by its session id (as results and explore show it)."),
      Options.optional
    ),
    since,
    until,
    sourceType: choiceOption(
      "source-type",
      KNOWN_SOURCE_TYPES,
      "Only this kind of text: codex_transcript or claude_transcript (messages read from your Codex or Claude Code transcripts) or authored_update (notes written for blctx rather than read from a transcript)."
    ).pipe(Options.optional),
    agent: agent("results"),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const query = o.query.join(" ").trim()
        if (query === "") return yield* new CliUsageError({ message: "give a search query" })
        yield* checkRange(o.since, o.until)
        const response = yield* withDaemon((client) =>
          client.search({
            query,
            limit: o.limit,
            offset: o.offset,
            filters: defined({
              project: optional(o.project),
              session: optional(o.session),
              since: optional(o.since),
              until: optional(o.until),
              source_type: optional(o.sourceType),
              agent: optional(o.agent)
            })
          })
        )
        yield* emit(response, (r) => r, renderSearch, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "Search your indexed history",
      "Searches every agent's history (Codex and Claude Code) unless --agent narrows it. Matches words (BM25) and, once the embedding model has embedded every chunk, meaning too; query_mode in the answer says which, and why. Every result carries its exact text, its agent and source_type, a context_id for blctx context, and its source file with line and byte range. An answer holds at most 24,000 characters of text. Searching never imports anything."
    )
  )
)

export const recentCommand = Command.make(
  "recent",
  {
    days: boundedOption(
      "days",
      RECENT_BOUNDS.days,
      `Only turns active in the last N days, up to ${RECENT_BOUNDS.days.max} (fractions such as 0.5 work). Not with --since.`
    ).pipe(Options.optional),
    since,
    until,
    project,
    agent: agent("turns"),
    limit: limit(RECENT_BOUNDS.limit, "turns"),
    offset: offset(RECENT_BOUNDS.offset, "turns"),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        if (Option.isSome(o.days) && Option.isSome(o.since)) {
          return yield* new CliUsageError({ message: "--days and --since cannot be used together" })
        }
        yield* checkRange(o.since, o.until)
        const response = yield* withDaemon((client) =>
          client.recent(
            defined({
              days: optional(o.days),
              since: optional(o.since),
              until: optional(o.until),
              project: optional(o.project),
              agent: optional(o.agent),
              limit: o.limit,
              offset: o.offset
            })
          )
        )
        yield* emit(response, (r) => r, renderRecent, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "Show the most recent turns of your coding sessions",
      "Turns of every agent's sessions (Codex and Claude Code) and notes, with activity in the time range, newest activity first; without --days or --since, from the beginning. --agent keeps one agent's. A message whose time is unknown is never in a bounded range."
    )
  )
)

export const contextCommand = Command.make(
  "context",
  {
    contextId: Args.text({ name: "context-id" }).pipe(
      Args.withDescription("The context_id of a result of blctx search or blctx recent.")
    ),
    offset: boundedOption(
      "offset",
      CONTEXT_BOUNDS.offset,
      "The first message to return, by its position in the session (0 is the first message). Default: the first message of the result's turn."
    ).pipe(Options.optional),
    limit: limit(CONTEXT_BOUNDS.limit, "messages"),
    charOffset: boundedOption(
      "char-offset",
      CONTEXT_BOUNDS.char_offset,
      `Start this many characters into the first message (default ${CONTEXT_BOUNDS.char_offset.fallback}), to continue a message an answer cut off: pass its next_char_offset.`
    ).pipe(Options.withDefault(CONTEXT_BOUNDS.char_offset.fallback)),
    agent: choiceOption(
      "agent",
      KNOWN_AGENTS,
      "Answer only when the result comes from this agent's history (codex or claude), or is a note no other agent's session wrote; otherwise fail saying whose it is."
    ).pipe(Options.optional),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* withDaemon((client) =>
          client.context(
            defined({
              context_id: o.contextId,
              offset: optional(o.offset),
              limit: o.limit,
              char_offset: o.charOffset,
              agent: optional(o.agent)
            })
          )
        )
        yield* emit(response, (r) => r, renderContext, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "Show the messages around a search or recent result",
      "The messages of the result's session, from its turn on, with their exact text and source positions. An answer holds at most 24,000 characters of text; next_offset and next_char_offset continue exactly where it stopped."
    )
  )
)
