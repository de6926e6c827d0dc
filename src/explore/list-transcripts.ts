import { DateTime, Effect, Option, Stream } from "effect"
import { redactNullable } from "../redaction/redact.js"
import { decodeSessionMeta } from "../transcripts/codex-payloads.js"
import { discoverSessions } from "../transcripts/discovery.js"
import { openTranscript } from "../transcripts/reader.js"
import { ExploreFailure } from "./explore-failure.js"

export interface TranscriptListing {
  readonly path: string
  readonly size: number
  readonly modified_at: string
  readonly archived: boolean
  readonly session_id: string | null
  readonly cwd: string | null
}

export interface ExploreListResult {
  readonly codex_home: string
  /** Counts over everything found, whatever `--limit` shows. */
  readonly total: number
  readonly active: number
  readonly archived: number
  readonly compressed: { readonly count: number; readonly paths: ReadonlyArray<string> }
  readonly skipped_links: number
  readonly limit: number
  readonly transcripts: ReadonlyArray<TranscriptListing>
}

/** The session line is first; it can be large (base instructions), so read at most this much of it. */
const HEADER_LINE_BYTES = 1024 * 1024

/** Session id and cwd from the first line, when it is a readable `session_meta`; nulls otherwise. */
const readHeader = (path: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const opened = yield* openTranscript(path, { chunkBytes: 64 * 1024, maxLineBytes: HEADER_LINE_BYTES })
      const first = yield* Stream.runHead(opened.records)
      if (Option.isNone(first) || first.value.kind !== "record" || first.value.entry.type !== "session_meta") {
        return { session_id: null, cwd: null }
      }
      const meta = decodeSessionMeta(first.value.entry.payload)
      return Option.match(meta, {
        onNone: () => ({ session_id: null, cwd: null }),
        // The listing shows what the index would store: secrets in a cwd are redacted.
        onSome: (m) => ({ session_id: redactNullable(m.id ?? null).text, cwd: redactNullable(m.cwd ?? null).text })
      })
    })
  ).pipe(Effect.orElseSucceed(() => ({ session_id: null, cwd: null })))

/** `blctx explore`: the newest transcripts, active and archived, with what is cheap to know. */
export const listTranscripts = Effect.fn("Explore.list")(function* (codexHome: string, limit: number) {
  const found = yield* discoverSessions(codexHome).pipe(
    Effect.mapError(
      (e) =>
        new ExploreFailure({
          message: `${e.op} ${e.path} failed: ${e.code}`,
          path: e.path,
          remediation: `Check that ${codexHome} is your Codex home and that you can read it.`
        })
    )
  )
  const transcripts: Array<TranscriptListing> = []
  for (const file of found.files.slice(0, limit)) {
    const header = yield* readHeader(file.path)
    transcripts.push({
      path: file.path,
      size: file.size,
      modified_at: DateTime.formatIso(DateTime.unsafeMake(file.mtimeMs)),
      archived: file.archived,
      ...header
    })
  }
  const result: ExploreListResult = {
    codex_home: codexHome,
    total: found.files.length,
    active: found.activeCount,
    archived: found.archivedCount,
    compressed: { count: found.compressed.length, paths: found.compressed },
    skipped_links: found.skippedLinks,
    limit,
    transcripts
  }
  return result
})
