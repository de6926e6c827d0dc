import * as NodePath from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { ExitCode } from "../domain/report.js"
import type { ExploreFailure } from "../explore/explore-failure.js"
import { type ExploreView, exploreFile } from "../explore/explore-file.js"
import { listTranscripts } from "../explore/list-transcripts.js"
import { renderFile, renderList } from "../explore/render-explore-text.js"
import { stringifyForTerminal } from "../explore/terminal-json.js"
import { sanitizeForTerminal } from "../installer/render-text.js"
import { Paths } from "../paths/paths.js"
import { ExitStatus } from "./exit-status.js"
import { OutputMode } from "./output-mode.js"
import { CliUsageError } from "./usage-error.js"

const path = Args.text({ name: "path" }).pipe(
  Args.withDescription("A Codex transcript (rollout-*.jsonl); without it, list the newest transcripts"),
  Args.optional
)
const view = Options.choice("view", ["messages", "raw", "preview"] as const).pipe(
  Options.withDescription(
    "messages: candidate messages as written; raw: every record; preview: proposed index decisions. Default: the conversation"
  ),
  Options.optional
)
const details = Options.boolean("details").pipe(Options.withDescription("Per-record decisions (preview), values (raw)"))
const startLine = Options.integer("start-line").pipe(
  Options.withDescription("Show records (or turns) from this line on"),
  Options.optional
)
const limit = Options.integer("limit").pipe(
  Options.withDescription("How many transcripts (list), records (raw, messages) or complete turns (default, preview)"),
  Options.optional
)
const root = Options.text("root").pipe(
  Options.withDescription("The Codex home to list (default: $CODEX_HOME or ~/.codex)"),
  Options.optional
)

const DEFAULT_LIST_LIMIT = 20
const DEFAULT_FILE_LIMIT = 20

const usage = (message: string) => Effect.fail(new CliUsageError({ message }))

const positive = (name: string, value: Option.Option<number>, fallback: number) =>
  Option.match(value, {
    onNone: () => Effect.succeed(fallback),
    onSome: (n) => (Number.isInteger(n) && n >= 1 ? Effect.succeed(n) : usage(`--${name} must be a whole number ≥ 1`))
  })

const report = (failure: ExploreFailure) =>
  Effect.gen(function* () {
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
 * `blctx explore`: read-only. Lists transcripts, or shows one file as a conversation, its
 * candidate messages, its raw records, or the proposed index decisions. Creates no state.
 */
export const exploreCommand = Command.make("explore", { path, view, details, startLine, limit, root }, (o) =>
  Effect.gen(function* () {
    const mode = yield* OutputMode
    const out = (json: unknown, text: () => string) => Console.log(mode.json ? stringifyForTerminal(json) : text())

    if (Option.isNone(o.path)) {
      if (Option.isSome(o.view)) return yield* usage("--view needs a transcript PATH")
      if (o.details) return yield* usage("--details needs a transcript PATH")
      if (Option.isSome(o.startLine)) return yield* usage("--start-line needs a transcript PATH")
      const n = yield* positive("limit", o.limit, DEFAULT_LIST_LIMIT)
      const paths = yield* Paths
      const home = Option.match(o.root, { onNone: () => paths.codexHome, onSome: (r) => NodePath.resolve(r) })
      const result = yield* listTranscripts(home, n)
      return yield* out(result, () => renderList(result))
    }

    if (Option.isSome(o.root)) return yield* usage("--root lists transcripts; it cannot be combined with a PATH")
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
  }).pipe(Effect.catchTag("ExploreFailure", report))
).pipe(Command.withDescription("Look at your Codex transcripts and what blctx would index from them (read-only)"))
