import * as NodePath from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Option, Schema } from "effect"
import { withDaemon as ensureDaemon } from "../daemon/ensure-daemon.js"
import { quoteValue } from "../domain/decode-issues.js"
import { ExitCode } from "../domain/report.js"
import { ansiStyle, plainStyle, progressBar } from "../installer/render-text.js"
import { JobId, type JobView } from "../jobs/job.js"
import { Paths } from "../paths/paths.js"
import { ContextRequest } from "../retrieval/context.js"
import { RecentRequest } from "../retrieval/recent.js"
import { SessionsRequest, type SessionsResponse } from "../retrieval/sessions.js"
import type { BlctxClient } from "../rpc/client.js"
import { sanitizeDeep, sanitizeForTerminal, stringifyForTerminal } from "../terminal/sanitize.js"
import { defaultTargets, describeTargets, discoverTranscripts, targetsUnder } from "../transcripts/discovery.js"
import { agentLabels, describeHomes, describeSessionFolders } from "../transcripts/formats/registry.js"
import { rangeProblem } from "./checked-options.js"
import { ExitStatus } from "./exit-status.js"
import { commandDescription } from "./help.js"
import { renderContext, renderJob, renderRecent, renderStatus } from "./history-render.js"
import { HISTORY_CALL_TIMEOUT_MS, remainingOfCommandDeadline } from "./history-timeout.js"
import { checkTranscriptPaths, UnindexablePaths } from "./index-paths.js"
import { outputWidth, wantsReadable } from "./output-choice.js"
import { OutputMode } from "./output-mode.js"
import { AGENT_FIELD, DIRECTORY_FIELD, requestOptions, TIME_FIELD } from "./request-options.js"
import { SEARCH_FIELDS, SearchOptionsRequest } from "./search-fields.js"
import { renderSearch, when } from "./search-render.js"
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
        .JobStatus({ job_id: current.id })
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
        ).pipe(Effect.zipRight(client.JobStatus({ job_id: job.id })))
    }),
    Effect.flatten
  )

/** Submits one import job (once: never retried) and, with `wait`, follows it to its end. */
export const submitImport = (client: BlctxClient, files: ReadonlyArray<string>, wait: boolean) =>
  Effect.gen(function* () {
    const submitted = yield* client.SubmitJob({ kind: "import", params: { paths: files, origin: "cli" } })
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
        withDaemon((client) => client.ContextStatus()).pipe(
          Effect.flatMap((status) => emit(status, (s) => s, renderStatus, o.pretty))
        ),
      onSome: (id) =>
        Effect.gen(function* () {
          const jobId = yield* Schema.decodeUnknown(JobId)(id).pipe(
            Effect.mapError(() => new CliUsageError({ message: `${quoteValue(id)} is not a job id` }))
          )
          const job = yield* withDaemon((client) => client.JobStatus({ job_id: jobId }))
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

/** An empty `[--since, --until)` range is a usage error, found before the daemon is asked. */
const checkRange = (since: string | undefined, until: string | undefined) => {
  const problem = rangeProblem(since, until)
  return problem === undefined ? Effect.void : Effect.fail(new CliUsageError({ message: problem }))
}

export const searchCommand = Command.make(
  "search",
  {
    query: Args.text({ name: "query" }).pipe(
      Args.withDescription("The words to look for; several words form one query (quotes are not needed)."),
      Args.repeated
    ),
    request: requestOptions(SearchOptionsRequest, SEARCH_FIELDS),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const query = o.query.join(" ").trim()
        if (query === "") return yield* new CliUsageError({ message: "give a search query" })
        yield* checkRange(o.request.filters.since, o.request.filters.until)
        const response = yield* withDaemon((client) => client.Search({ query, ...o.request }))
        yield* emit(response, (r) => r, renderSearch, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "Search your indexed history",
      `Searches every agent's history (${agentLabels()}) unless --agent narrows it. Matches words (BM25) and, once the embedding model has embedded every chunk, meaning too; query_mode in the answer says which, and why. Every result carries its exact text, its agent and source_type, a context_id for blctx context, and its source file with line and byte range. An answer holds at most 24,000 characters of text. Searching never imports anything.`
    )
  )
)

/** recent and sessions: the same filters, the time range given by --days or --since. */
const RANGE_FIELDS = {
  days: {},
  since: TIME_FIELD,
  until: TIME_FIELD,
  project: DIRECTORY_FIELD,
  agent: AGENT_FIELD,
  limit: {},
  offset: {}
}

/** A read over a time range: --days and --since exclude each other, and the range must be in order. */
const rangeRead = <A, E extends Error>(
  range: {
    readonly days?: number | undefined
    readonly since?: string | undefined
    readonly until?: string | undefined
  },
  read: (client: BlctxClient) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    if (range.days !== undefined && range.since !== undefined) {
      return yield* new CliUsageError({ message: "--days and --since cannot be used together" })
    }
    yield* checkRange(range.since, range.until)
    return yield* withDaemon(read)
  })

export const recentCommand = Command.make(
  "recent",
  {
    request: requestOptions(RecentRequest, RANGE_FIELDS),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* rangeRead(o.request, (client) => client.Recent(o.request))
        yield* emit(response, (r) => r, renderRecent, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "Show the most recent turns of your coding sessions",
      `Turns of every agent's sessions (${agentLabels()}) and notes, with activity in the time range, newest activity first; without --days or --since, from the beginning. --agent keeps one agent's. A message whose time is unknown is never in a bounded range.`
    )
  )
)

/** `blctx sessions --pretty`: one line per session, newest activity first (the rest is in the JSON). */
const renderSessions = (answer: SessionsResponse, style: typeof plainStyle): string => {
  const r = sanitizeDeep(answer)
  const lines = [style.bold(`${r.sessions.length} sessions`) + style.dim(` (${r.since ?? "…"} to ${r.until ?? "now"})`)]
  for (const s of r.sessions) {
    lines.push(
      `${style.bold(when(s.last_activity))}  ${s.agent ?? "?"}  ${s.turns} turns  ${style.dim(s.project ?? "no project")}  ${style.dim(s.session_id)}`
    )
  }
  if (r.next_offset !== null) lines.push(style.dim(`More: --offset ${r.next_offset}`))
  return lines.join("\n")
}

export const sessionsCommand = Command.make(
  "sessions",
  {
    request: requestOptions(SessionsRequest, RANGE_FIELDS),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* rangeRead(o.request, (client) => client.Sessions(o.request))
        yield* emit(response, (r) => r, renderSessions, o.pretty)
      }),
      o.pretty
    )
).pipe(
  Command.withDescription(
    commandDescription(
      "List your coding sessions",
      `Sessions of every agent (${agentLabels()}) with activity in the time range, newest activity first: each with its agent, project, first and last activity and how many turns it has. Filters as for recent.`
    )
  )
)

export const contextCommand = Command.make(
  "context",
  {
    contextId: Args.text({ name: "context-id" }).pipe(
      Args.withDescription("The context_id of a result of blctx search or blctx recent.")
    ),
    request: requestOptions(ContextRequest.omit("context_id"), {
      offset: {},
      limit: {},
      char_offset: {},
      agent: AGENT_FIELD
    }),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* withDaemon((client) => client.Context({ context_id: o.contextId, ...o.request }))
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
