import * as NodePath from "node:path"
import { Clock, Effect, Either, Option, Schema } from "effect"
import { SafeFs } from "../../fs/safe-fs.js"
import { McpProbe, type McpProbeSession, type McpServerCommand } from "../../mcp/mcp-probe.js"
import { Paths } from "../../paths/paths.js"
import { ProgramPaths } from "../../paths/program-paths.js"
import { fail } from "../step.js"
import { HISTORY_INDEX_FILE } from "./history-index.js"
import { activeInstallationManifest } from "./installation-manifest.js"
import { callDecoded, IndexStatus, MCP_PROBE_TIMEOUT, probeFailure } from "./mcp-health.js"
import { mcpServerCommand } from "./mcp-server-command.js"
import { stepWithServices } from "./step-context.js"

/** The part of history_index's record this step reads: which session files it imported. */
const ImportedPaths = Schema.parseJson(Schema.Struct({ paths: Schema.Array(Schema.String) }))
const decodeImported = Schema.decodeUnknownEither(ImportedPaths)

/** A transcript citation: the file and its line. Note revisions have no path and are not history. */
const Source = Schema.Struct({
  kind: Schema.String,
  path: Schema.optional(Schema.String),
  line: Schema.optional(Schema.Number)
})
const Cited = Schema.Struct({ context_id: Schema.String, text: Schema.String, source: Source })

const RecentAnswer = Schema.Struct({
  turns: Schema.Array(
    Schema.Struct({ source_session_id: Schema.optional(Schema.NullOr(Schema.String)), messages: Schema.Array(Cited) })
  )
})
const SearchAnswer = Schema.Struct({
  query_mode: Schema.String,
  query_mode_reason: Schema.NullOr(Schema.String),
  results: Schema.Array(Cited)
})
const ContextAnswer = Schema.Struct({
  total_messages: Schema.Number,
  messages: Schema.Array(Schema.Struct({ is_anchor: Schema.Boolean }))
})

/** What an index with no transcript yet is searched for: it must answer, with no results. */
const EMPTY_INDEX_QUERY = "blctx history retrieval check"
/** How many turns `recent` is asked for, to find one imported message with words to search for. */
const RECENT_TURNS = 20
/** How many words of that message the search uses. */
const QUERY_WORDS = 6

/** A few plain words of a message (letters and digits, three or more), as a query a person might type. */
export const queryWordsOf = (text: string): string | null => {
  const words = text.match(/[\p{L}\p{N}]{3,}/gu) ?? []
  return words.length < 2 ? null : words.slice(0, QUERY_WORDS).join(" ")
}

const REINDEX = "Run: blctx install codex --step history_index"
const RECHECK =
  "Check the daemon and the index: blctx status --step service_health and blctx doctor --step history_index; then run: blctx status --step history_retrieval"

/** The session files history_index imported; none when it recorded no import (nothing to index). */
const imported = Effect.gen(function* () {
  const fs = yield* SafeFs
  const paths = yield* Paths
  const recordPath = NodePath.join(paths.stateDir, HISTORY_INDEX_FILE)
  const text = yield* fs.readText(recordPath).pipe(Effect.option)
  if (Option.isNone(text)) return []
  const decoded = decodeImported(text.value)
  if (Either.isLeft(decoded)) return yield* fail(`${recordPath} is unreadable`, REINDEX)
  return decoded.right.paths
})

/** What this installation runs as its MCP server: node, the bundled entry, its id and XDG roots. */
const server = Effect.gen(function* () {
  const paths = yield* Paths
  const programs = yield* ProgramPaths
  const manifest = yield* activeInstallationManifest((path) => `blctx is not installed (no active manifest at ${path})`)
  const command: McpServerCommand = mcpServerCommand(programs, paths, manifest.installation_id)
  return command
})

/** What to search for: a few words of each recent message that cites one of `cited`'s files. */
const candidatesOf = (recent: typeof RecentAnswer.Type, cited: (path: string | undefined) => boolean) =>
  recent.turns.flatMap((turn) =>
    turn.messages
      .filter((m) => cited(m.source.path))
      .flatMap((m) => {
        const query = queryWordsOf(m.text)
        return query === null ? [] : [{ query, session: turn.source_session_id ?? null }]
      })
  )

/**
 * `files` are the sessions history_index imported; with none, whatever transcript the index
 * holds (the hooks may have captured a session since) is searched for, and an index with no
 * transcript at all must answer a search with no results.
 */
const retrieve = (session: McpProbeSession, cmd: McpServerCommand, files: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const call = <A, I>(tool: string, args: Record<string, unknown>, schema: Schema.Schema<A, I>) =>
      callDecoded(session, cmd, tool, args, schema, RECHECK)
    const cited = (path: string | undefined) => path !== undefined && (files.size === 0 || files.has(path))
    const status = yield* call("context_status", {}, IndexStatus)
    const candidates = candidatesOf(yield* call("recent", { limit: RECENT_TURNS }, RecentAnswer), cited)
    if (candidates.length === 0 && files.size === 0) {
      const found = yield* call("search", { query: EMPTY_INDEX_QUERY, limit: 1 }, SearchAnswer)
      return { status, found, hit: undefined, query: EMPTY_INDEX_QUERY, context: undefined }
    }
    if (candidates.length === 0) {
      return yield* fail(
        `recent shows no message with words to search for from the ${files.size} imported session files (index ${status.index_state}); the import may not have finished`,
        `Follow the import: blctx status --step history_index; ${REINDEX} if it failed`
      )
    }
    const tried: Array<string> = []
    for (const candidate of candidates.slice(0, 3)) {
      tried.push(candidate.query)
      const found = yield* call("search", { query: candidate.query, limit: 10 }, SearchAnswer)
      const hit = found.results.find((r) => cited(r.source.path))
      if (hit === undefined) continue
      const context = yield* call("context", { context_id: hit.context_id, limit: 5 }, ContextAnswer)
      if (!context.messages.some((m) => m.is_anchor)) {
        return yield* fail(
          `context for ${hit.context_id} answered ${context.messages.length} messages without the result itself`,
          RECHECK
        )
      }
      return { status, found, hit, query: candidate.query, context }
    }
    return yield* fail(
      `search found nothing from the imported sessions for words taken from them (${tried.map((q) => JSON.stringify(q)).join(", ")}; index ${status.index_state}, queries ${status.query_mode})`,
      RECHECK
    )
  })

type Retrieved = Effect.Effect.Success<ReturnType<typeof retrieve>>

/** What the check found, in one line. */
const describeRetrieval = (r: Retrieved, ms: number) => {
  const mode =
    r.found.query_mode === "lexical"
      ? `query_mode lexical (words only${r.found.query_mode_reason === null ? "" : `: ${r.found.query_mode_reason}`})`
      : `query_mode ${r.found.query_mode}`
  if (r.hit === undefined || r.context === undefined) {
    return `no session indexed yet: search ${JSON.stringify(r.query)} answered with ${r.found.results.length} results (${mode}); ${ms} ms through MCP`
  }
  const at = `${r.hit.source.path ?? "?"}${r.hit.source.line === undefined ? "" : `:${r.hit.source.line}`}`
  return `search ${JSON.stringify(r.query)} found ${at} (${mode}); context expanded it to ${r.context.messages.length} of ${r.context.total_messages} messages; ${ms} ms through MCP`
}

const verify = Effect.fn("HistoryRetrieval.verify")(function* () {
  const probe = yield* McpProbe
  const files = yield* imported
  const cmd = yield* server
  const t0 = yield* Clock.currentTimeMillis
  const r = yield* probe
    .withSession(cmd, MCP_PROBE_TIMEOUT, (session) => retrieve(session, cmd, new Set(files)))
    .pipe(Effect.mapError((e) => (e._tag === "McpProbeFailed" ? probeFailure(cmd, RECHECK)(e) : e)))
  const t1 = yield* Clock.currentTimeMillis
  return { detail: describeRetrieval(r, t1 - t0) }
})

/**
 * Through blctx's MCP server as this installation runs it (the command codex_mcp registers): asks
 * `recent` for the newest turns, takes a few words of a message from a session history_index
 * imported, `search`es for them until a result cites one of those files, then expands it with
 * `context`. Lexical queries pass (a missing model is said in the detail). With no session imported
 * it checks what the index holds: a transcript the hooks captured is found the same way, and an
 * index with none must answer a search with no results. Nothing to install or remove.
 */
export const historyRetrievalStep = stepWithServices(
  { id: "history_retrieval", title: "History retrieval", requires: ["history_index", "service_health"] },
  {
    install: () => verify(),
    verify: () => verify(),
    uninstall: () => Effect.succeed({ detail: "nothing to remove: this check installs nothing" })
  }
)
