import * as NodePath from "node:path"
import type { HookFs } from "../capture/hook-fs.js"
import { MANIFEST_FILE, readManifestText } from "../capture/hook-gate.js"
import { privateDirState } from "../capture/private-dir.js"
import { type ExchangeOutcome, rpcExchangeRetryingBusy } from "../capture/rpc-exchange.js"
import { type NumberBound, withinBound } from "../domain/read-bounds.js"
import { resolvePathsFromEnv } from "../paths/resolve-paths.js"
import type { SearchFilters, SearchRequest, SearchResponse } from "../retrieval/contract.js"
import { DAEMON_BUSY_TAG } from "../rpc/busy-retry.js"
import { notAnsweringReason, notAnsweringRemediation } from "../rpc/not-answering.js"
import { recordedPidBeside } from "../rpc/recorded-pid.js"
import { socketPathIn } from "../rpc/socket-location.js"
import { sanitizeForTerminal, stringifyForTerminal } from "../terminal/sanitize.js"
import { ansiStyle, plainStyle } from "../terminal/style.js"
import { SEARCH_ANSWER_SCHEMA, SEARCH_OPTION_ROWS } from "./fast-search-schema.js"
import { extractGlobalFlags } from "./global-flags.js"
import { HISTORY_CALL_TIMEOUT_MS } from "./history-timeout.js"
import { NO_MATCH, shapeBy } from "./json-shape.js"
import { outputWidth, wantsColor, wantsReadable } from "./output-choice.js"
import type { OptionRow } from "./request-options.js"
import { renderSearch } from "./search-render.js"

/**
 * `blctx search` without `effect`: loading the CLI chunk (effect, @effect/cli, @effect/rpc) costs
 * most of a second, a search a few milliseconds. For a command line this module fully understands,
 * JSON or readable (`--pretty`, the default at a terminal), it sends one raw @effect/rpc NDJSON
 * `Search` frame over the daemon's socket (`src/capture/rpc-exchange.ts`, shared with the hook's
 * prompt recall), reads the answer with the JSON Schema of the daemon's own `SearchResponse`
 * (`fast-search-schema.ts`, generated from it; `json-shape.ts`) and returns exactly the text the full CLI would
 * print: the readable rendering is the full CLI's own (`search-render.ts`), chosen, colored and
 * wrapped by the same rules (`output-choice.ts`). Anything else, and any failure
 * (no manifest, no socket, a refusal, an error answer, a malformed one, a daemon still busy at the
 * deadline after asking again as the full CLI does), is `undefined`: the
 * caller then runs the full CLI, which starts the daemon on demand and prints the canonical answer
 * or error. Search only reads, so asking twice is safe. The one exception is no answer by the
 * deadline: the daemon is there but silent, the full CLI would only wait as long again to say so,
 * so the fast path prints the full CLI's not-answering error itself (exit 1). Only types come from
 * effect's packages (erased at build); the import graph is checked (programs/cli-fast-bundle.test.ts).
 */

/** An answer holds at most 24,000 characters of text; escaped and framed it stays far below this. */
const MAX_LINE_CHARS = 16 * 1_048_576
export const SEARCH_TAG = "Search"

// ---- the command line -------------------------------------------------------------------------

/**
 * What the fast path sends: the payload the full CLI's `search` builds from the same arguments
 * (never rephrasings, which `blctx search` does not offer).
 */
export type FastSearchRequest = Required<Omit<SearchRequest, "filters" | "rephrasings">> & {
  readonly filters: SearchFilters
}

/** A canonical integer (no sign, no leading zero, no exponent) within bounds, or undefined. */
const integerIn = (text: string, bound: NumberBound): number | undefined => {
  if (!/^(0|[1-9][0-9]{0,5})$/.test(text)) return undefined
  const n = Number(text)
  return withinBound(n, bound) ? n : undefined
}

/**
 * The search options with a value, as the full CLI derives them from `SearchRequest`
 * (`search-fields.ts`, generated into `fast-search-schema.ts`); `--pretty` is not among them.
 */
const OPTIONS: ReadonlyMap<string, OptionRow> = new Map(SEARCH_OPTION_ROWS.map((row) => [row.option, row]))

/** The value `text` gives the option, or undefined when the fast path leaves it to the full CLI. */
const optionValue = (row: OptionRow, text: string): string | number | undefined => {
  if (row.bound !== undefined) return integerIn(text, row.bound)
  if (row.choices !== undefined) return row.choices.includes(text) ? text : undefined
  return text
}

/** The request with every option left out at its default: a bound's fallback, or nothing. */
const defaultRequest = (): Record<string, unknown> => {
  const request: Record<string, unknown> = { filters: {} }
  for (const row of SEARCH_OPTION_ROWS)
    if (row.bound?.fallback !== undefined) setAt(request, row.path, row.bound.fallback)
  return request
}

/** Sets the field at `path`, making the objects on the way. */
const setAt = (record: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown) => {
  let into = record
  for (const name of path.slice(0, -1)) {
    into[name] ??= {}
    into = into[name] as Record<string, unknown>
  }
  into[path.at(-1) as string] = value
}

/** The output flags of a search command line (`output-choice.ts` turns them into a format). */
export interface SearchFlags {
  readonly json: boolean
  readonly noColor: boolean
  readonly pretty: boolean
}

/** What a command line the fast path understands asks for: the request and how to print it. */
export interface SearchLine {
  readonly request: FastSearchRequest
  readonly flags: SearchFlags
}

/** The values @effect/cli takes as a boolean option's value when they follow it (`--pretty false`). */
const BOOLEAN_VALUES = new Set(["true", "1", "y", "yes", "on", "false", "0", "n", "no", "off"])

/**
 * The search this command line asks for, when the fast path may answer it: `search WORD… [OPTION
 * VALUE]… [--pretty] [-- WORD…]` in any order, with `--json`/`--no-color` anywhere before `--`.
 * After `--` every argument is a word, as @effect/cli reads it (the way to search for text that
 * starts with `-`). Deliberately narrower than @effect/cli before `--`: every option at most once,
 * as `--name value`, values and words neither empty nor starting with `-`, integers canonical and
 * in range, `--pretty` not followed by a value @effect/cli would read as its boolean. Anything else
 * (`--help`, `--limit=5`, `--pretty false`, an unknown flag) is undefined and left to the full CLI,
 * which owns usage errors and help.
 */
export const recognizeSearch = (argv: ReadonlyArray<string>): SearchLine | undefined => {
  const { flags, rest } = extractGlobalFlags(argv)
  if (rest[0] !== "search") return undefined
  const words: Array<string> = []
  const seen = new Set<string>()
  const request = defaultRequest()
  let pretty = false
  let wordsOnly = false
  for (let i = 1; i < rest.length; i++) {
    const token = rest[i] as string
    if (wordsOnly || !token.startsWith("-")) {
      if (token.trim() === "") return undefined
      words.push(token)
      continue
    }
    if (token === "--") {
      wordsOnly = true
      continue
    }
    if (token === "--pretty") {
      const next = rest[i + 1]
      if (pretty || (next !== undefined && BOOLEAN_VALUES.has(next))) return undefined
      pretty = true
      continue
    }
    const row = OPTIONS.get(token)
    const raw = rest[i + 1]
    if (row === undefined || seen.has(token) || raw === undefined || raw === "" || raw.startsWith("-")) {
      return undefined
    }
    const value = optionValue(row, raw)
    if (value === undefined) return undefined
    seen.add(token)
    i++
    setAt(request, row.path, value)
  }
  // As the full CLI builds it: the words joined by spaces, trimmed.
  const query = words.join(" ").trim()
  if (query === "") return undefined
  return { request: { query, ...request } as FastSearchRequest, flags: { ...flags, pretty } }
}

// ---- the answer ---------------------------------------------------------------------------------

/** The encoded SearchResponse, as the daemon sends it and the full CLI prints it. */
type SearchAnswer = (typeof SearchResponse)["Encoded"]

// ---- the exchange -------------------------------------------------------------------------------

export type FastResult =
  | { readonly ok: true; readonly answer: SearchAnswer }
  | {
      readonly ok: false
      readonly reason: "not_installed" | "unavailable" | "timeout" | "busy" | "error_answer" | "malformed_answer"
    }
type Failure = Extract<FastResult, { ok: false }>

/** The fast path's names for how the exchange ended, after reading a success as a SearchResponse. */
const fastResultOf = (outcome: ExchangeOutcome): FastResult => {
  switch (outcome._tag) {
    case "Success": {
      const answer = shapeBy(SEARCH_ANSWER_SCHEMA, outcome.value)
      return answer === NO_MATCH
        ? { ok: false, reason: "malformed_answer" }
        : { ok: true, answer: answer as SearchAnswer }
    }
    case "ErrorAnswer":
      return { ok: false, reason: outcome.errorTag === DAEMON_BUSY_TAG ? "busy" : "error_answer" }
    case "MalformedAnswer":
      return { ok: false, reason: "malformed_answer" }
    case "Timeout":
      return { ok: false, reason: "timeout" }
    case "Unavailable":
      return { ok: false, reason: "unavailable" }
  }
}

/** How an answer is printed: readable text (in color, wrapped to a width) or JSON. */
export interface OutputFormat {
  readonly readable: boolean
  readonly color: boolean
  readonly width: number | undefined
}

/** stdout as the process sees it: whether it is a terminal, and its width when it is one. */
export interface Terminal {
  readonly isTTY: boolean
  readonly columns: number | undefined
}

/** The format the full CLI's `emit` would choose for these flags, this terminal and environment. */
export const outputFormat = (flags: SearchFlags, terminal: Terminal, env: NodeJS.ProcessEnv): OutputFormat => {
  const facts = { stdoutTty: terminal.isTTY, columns: terminal.columns, env }
  return {
    readable: wantsReadable(flags.json, flags.pretty, terminal.isTTY),
    color: wantsColor(flags, facts),
    width: outputWidth(facts)
  }
}

/** What the full CLI's `emit` prints for the answer (Console.log adds the newline). */
export const printAnswer = (answer: SearchAnswer, format: OutputFormat): string =>
  format.readable
    ? `${renderSearch(answer, format.color ? ansiStyle : plainStyle, format.width)}\n`
    : `${stringifyForTerminal(answer)}\n`

/**
 * The `Search` request over the socket, bounded by `deadlineMs` from the call to the answer. A busy
 * answer is asked again within the deadline, as the full CLI's client does; when the deadline
 * passes after one, the result is still `busy` (the full CLI reports the last busy answer).
 */
export const askSearch = (socketPath: string, request: FastSearchRequest, deadlineMs: number): Promise<FastResult> =>
  rpcExchangeRetryingBusy(
    socketPath,
    { tag: SEARCH_TAG, payload: request },
    { deadlineMs, maxLineChars: MAX_LINE_CHARS }
  ).then(fastResultOf)

/**
 * The installation's socket, when blctx is installed as the full CLI requires before it asks the
 * daemon anything (a private state directory holding an active manifest), else a failure.
 */
export const installedSocket = (env: NodeJS.ProcessEnv, fs: HookFs): string | Failure => {
  const paths = resolvePathsFromEnv(env)
  if (paths === undefined || privateDirState(fs, paths.stateDir) !== "private")
    return { ok: false, reason: "not_installed" }
  const text = readManifestText(fs, NodePath.join(paths.stateDir, MANIFEST_FILE))
  if (text === "missing" || text === "unreadable") return { ok: false, reason: "not_installed" }
  try {
    const manifest = JSON.parse(text) as { readonly state?: unknown } | null
    if (manifest?.state !== "active") return { ok: false, reason: "not_installed" }
  } catch {
    return { ok: false, reason: "not_installed" }
  }
  return socketPathIn(paths.stateDir)
}

/** What the fast path prints, and the exit status. */
export interface FastOutput {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: 0 | 1
}

/**
 * The full CLI's report of a daemon that accepted the connection but did not answer: its
 * `DaemonUnavailable` (not_answering) message on stderr and, in JSON mode, the error document
 * on stdout (`reportFailure` in `history-commands.ts`).
 */
export const notAnsweringOutput = (socket: string, flags: SearchFlags, terminal: Terminal): FastOutput => {
  const pid = recordedPidBeside(socket)
  const message = `blctx daemon at ${socket} is unavailable: ${notAnsweringReason(pid)}. ${notAnsweringRemediation(pid)}`
  const document = { error: { _tag: "DaemonUnavailable", message }, exit_code: 1 }
  // Like `reportFailure`: the document only for JSON, or when stdout is not a terminal.
  const withDocument = flags.json || !terminal.isTTY
  return {
    stdout: withDocument ? `${stringifyForTerminal(document, undefined)}\n` : "",
    stderr: `blctx: ${sanitizeForTerminal(message)}\n`,
    exitCode: 1
  }
}

/**
 * What `blctx ARGV` prints when the fast path can answer it (an answer, or the daemon silent past
 * the deadline), or undefined: then run the full CLI. Nothing is printed here; the caller writes.
 */
export const fastSearch = async (
  argv: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  terminal: Terminal,
  fs: HookFs,
  deadlineMs: number = HISTORY_CALL_TIMEOUT_MS
): Promise<FastOutput | undefined> => {
  const line = recognizeSearch(argv)
  if (line === undefined) return undefined
  const socket = installedSocket(env, fs)
  if (typeof socket !== "string") return undefined
  const result = await askSearch(socket, line.request, deadlineMs)
  if (result.ok)
    return { stdout: printAnswer(result.answer, outputFormat(line.flags, terminal, env)), stderr: "", exitCode: 0 }
  return result.reason === "timeout" ? notAnsweringOutput(socket, line.flags, terminal) : undefined
}
