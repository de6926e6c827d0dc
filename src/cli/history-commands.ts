import * as NodePath from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Option, Schema } from "effect"
import { withDaemon as ensureDaemon } from "../daemon/ensure-daemon.js"
import { ExitCode } from "../domain/report.js"
import { ansiStyle, plainStyle, progressBar } from "../installer/render-text.js"
import { JobId, type JobView } from "../jobs/job.js"
import { Paths } from "../paths/paths.js"
import type { BlctxClient } from "../rpc/client.js"
import { discoverSessions } from "../transcripts/discovery.js"
import { ExitStatus } from "./exit-status.js"
import { renderContext, renderJob, renderRecent, renderSearch, renderStatus } from "./history-render.js"
import { OutputMode } from "./output-mode.js"
import { CliUsageError } from "./usage-error.js"

/** Every history command answers within this, or says the daemon is unavailable. */
const CALL_TIMEOUT = Duration.seconds(30)
const WAIT_LIMIT = Duration.minutes(10)
const POLL = Duration.millis(250)

const pretty = Options.boolean("pretty").pipe(Options.withDescription("A readable table instead of JSON"))

/** JSON unless `--pretty` (or a TTY without `--json`). */
const emit = <A>(
  value: A,
  encode: (a: A) => unknown,
  render: (a: A, style: typeof plainStyle) => string,
  wantPretty: boolean
) =>
  Effect.gen(function* () {
    const mode = yield* OutputMode
    const readable = !mode.json && (wantPretty || process.stdout.isTTY === true)
    yield* Console.log(
      readable ? render(value, mode.color ? ansiStyle : plainStyle) : JSON.stringify(encode(value), null, 2)
    )
  })

/** A session with the daemon, which is started on demand when it does not answer. */
const withDaemon = <A, E extends Error>(use: (client: BlctxClient) => Effect.Effect<A, E>) =>
  ensureDaemon(CALL_TIMEOUT, use)

/** A failed request: the message on stderr, one JSON document on stdout, exit 1. */
const reportFailure = (error: Error) =>
  Effect.gen(function* () {
    yield* Console.error(`blctx: ${error.message}`)
    const mode = yield* OutputMode
    if (mode.json || process.stdout.isTTY !== true) {
      const tag = "_tag" in error ? String(error._tag) : "Error"
      yield* Console.log(JSON.stringify({ error: { _tag: tag, message: error.message }, exit_code: ExitCode.failed }))
    }
    yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
  })

const handled = <E extends Error, R>(effect: Effect.Effect<void, E, R>) =>
  effect.pipe(Effect.catchAll((e) => (e instanceof CliUsageError ? Effect.fail(e) : reportFailure(e))))

// ---- index -----------------------------------------------------------------------------------

const indexPaths = Args.text({ name: "path" }).pipe(Args.withDescription("Transcript files to index"), Args.repeated)
const root = Options.text("root").pipe(
  Options.withDescription("Index every active and archived transcript under this CODEX_HOME"),
  Options.optional
)
const wait = Options.boolean("wait").pipe(Options.withDescription("Wait (up to ten minutes) for the job to finish"))

const follow = (client: BlctxClient, job: JobView) =>
  Effect.gen(function* () {
    const deadline = Date.now() + Duration.toMillis(WAIT_LIMIT)
    const tty = process.stderr.isTTY === true
    let current = job
    while (current.state === "queued" || current.state === "running") {
      if (Date.now() > deadline) {
        yield* Console.error(
          `blctx: job ${current.id} is still ${current.state} after ten minutes; it continues in the daemon. Inspect it with: blctx index-status ${current.id}`
        )
        return current
      }
      if (tty) {
        const total = current.progress_total ?? 0
        const bar = progressBar({
          label: `${current.progress_done}/${total} files`,
          ...(total > 0 ? { fraction: current.progress_done / total } : {})
        })
        process.stderr.write(`\r\u001b[2K${bar}`)
      }
      yield* Effect.sleep(POLL)
      current = yield* client.jobStatus(current.id)
    }
    if (tty) process.stderr.write("\r\u001b[2K")
    return current
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
      } else {
        const codexHome = Option.match(o.root, { onNone: () => paths.codexHome, onSome: (r) => NodePath.resolve(r) })
        const found = yield* discoverSessions(codexHome)
        files = found.files.map((f) => f.path)
        if (files.length === 0) {
          return yield* new CliUsageError({
            message: `no Codex transcripts under ${codexHome}/sessions or archived_sessions`
          })
        }
      }
      const job = yield* withDaemon((client) =>
        Effect.gen(function* () {
          const submitted = yield* client.submitJob({ kind: "import", params: { paths: files, origin: "cli" } })
          return o.wait ? yield* follow(client, submitted.job) : submitted.job
        })
      )
      yield* emit(job, (j) => ({ job: j }), renderJob, o.pretty)
      if (job.state === "failed" || job.state === "cancelled" || job.state === "superseded") {
        yield* Effect.flatMap(ExitStatus, (s) => s.set(ExitCode.failed))
      }
    })
  )
).pipe(Command.withDescription("Index transcripts (a durable job in the daemon; returns its id at once)"))

const jobIdArg = Args.text({ name: "job-id" }).pipe(Args.withDescription("A job id from blctx index"), Args.optional)

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
            Effect.mapError(() => new CliUsageError({ message: `${id} is not a job id` }))
          )
          const job = yield* withDaemon((client) => client.jobStatus(jobId))
          yield* emit(job, (j) => ({ job: j }), renderJob, o.pretty)
        })
    })
  )
).pipe(Command.withDescription("What the index covers, or the state of one job"))

// ---- search, recent, context -------------------------------------------------------------------

const limit = (fallback: number) => Options.integer("limit").pipe(Options.withDefault(fallback))
const offset = Options.integer("offset").pipe(Options.withDefault(0))
const project = Options.text("project").pipe(
  Options.withDescription("Only this project (working directory)"),
  Options.optional
)
const since = Options.text("since").pipe(
  Options.withDescription("From this date/time (inclusive; no offset = UTC)"),
  Options.optional
)
const until = Options.text("until").pipe(
  Options.withDescription("Before this date/time (exclusive; no offset = UTC)"),
  Options.optional
)
const optional = <A>(o: Option.Option<A>) => Option.getOrUndefined(o)
const defined = <T extends Record<string, unknown>>(record: T) =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>
  }

export const searchCommand = Command.make(
  "search",
  {
    query: Args.text({ name: "query" }).pipe(Args.repeated),
    limit: limit(10),
    offset,
    project,
    session: Options.text("session").pipe(Options.optional),
    since,
    until,
    sourceType: Options.choice("source-type", ["codex_transcript", "authored_update"]).pipe(Options.optional),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const query = o.query.join(" ").trim()
        if (query === "") return yield* new CliUsageError({ message: "give a search query" })
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
              source_type: optional(o.sourceType)
            })
          })
        )
        yield* emit(response, (r) => r, renderSearch, o.pretty)
      })
    )
).pipe(Command.withDescription("Search your history (hybrid when the model is ready, lexical otherwise)"))

export const recentCommand = Command.make(
  "recent",
  {
    days: Options.float("days").pipe(Options.optional),
    since,
    until,
    project,
    limit: limit(20),
    offset,
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* withDaemon((client) =>
          client.recent(
            defined({
              days: optional(o.days),
              since: optional(o.since),
              until: optional(o.until),
              project: optional(o.project),
              limit: o.limit,
              offset: o.offset
            })
          )
        )
        yield* emit(response, (r) => r, renderRecent, o.pretty)
      })
    )
).pipe(Command.withDescription("Recent turns by activity time"))

export const contextCommand = Command.make(
  "context",
  {
    contextId: Args.text({ name: "context-id" }),
    offset: Options.integer("offset").pipe(Options.optional),
    limit: limit(20),
    charOffset: Options.integer("char-offset").pipe(Options.withDefault(0)),
    pretty
  },
  (o) =>
    handled(
      Effect.gen(function* () {
        const response = yield* withDaemon((client) =>
          client.context(
            defined({ context_id: o.contextId, offset: optional(o.offset), limit: o.limit, char_offset: o.charOffset })
          )
        )
        yield* emit(response, (r) => r, renderContext, o.pretty)
      })
    )
).pipe(Command.withDescription("The messages around a search result, with exact text"))
