import { Effect, Option, Stream } from "effect"
import { redactNullable } from "../redaction/redact.js"
import {
  type DiscoveryTarget,
  discoverTranscripts,
  discoveryTotals,
  type HomeDiscovery,
  shownFile
} from "../transcripts/discovery.js"
import { formatById } from "../transcripts/formats/registry.js"
import { readOptionsOf, type SessionHeader } from "../transcripts/formats/transcript-format.js"
import { openTranscript } from "../transcripts/reader.js"
import { ExploreFailure } from "./explore-failure.js"

export interface TranscriptListing {
  readonly path: string
  readonly size: number
  readonly modified_at: string
  readonly archived: boolean
  /** The transcript format it was found by (`codex`) and the agent that wrote it. */
  readonly format: string
  readonly agent: string
  readonly session_id: string | null
  readonly cwd: string | null
}

export interface ExploreListResult {
  /** Where each registered format looked, and what it found there. */
  readonly homes: ReadonlyArray<HomeDiscovery>
  /** Counts over everything found, whatever `--limit` shows. */
  readonly total: number
  readonly active: number
  readonly archived: number
  readonly compressed: { readonly count: number; readonly paths: ReadonlyArray<string> }
  readonly skipped_links: number
  readonly limit: number
  readonly transcripts: ReadonlyArray<TranscriptListing>
}

/** A record line can be large (Codex's base instructions), so read at most this much of each. */
const HEADER_LINE_BYTES = 1024 * 1024

/**
 * How far into a file to look for the session's id and cwd. Codex says both on its first line;
 * a Claude Code file may open with records that carry neither (a summary, a queued prompt, a file
 * snapshot), and its first conversation record names both.
 */
const HEADER_RECORDS = 64

const NO_HEADER: SessionHeader = { session_id: null, cwd: null }

/** The first id and the first cwd the records name, as `explore PATH` reads them. */
const merge = (known: SessionHeader, next: SessionHeader): SessionHeader => ({
  session_id: known.session_id ?? next.session_id,
  cwd: known.cwd ?? next.cwd
})

const complete = (h: SessionHeader) => h.session_id !== null && h.cwd !== null

/** Session id and cwd from the file's first records, as its format reads them; nulls otherwise. */
const readHeader = (path: string, format: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const reader = formatById(format)
      if (Option.isNone(reader)) return NO_HEADER
      const opened = yield* openTranscript(path, {
        chunkBytes: 64 * 1024,
        maxLineBytes: HEADER_LINE_BYTES,
        ...readOptionsOf(reader.value)
      })
      const header = yield* opened.records.pipe(
        Stream.take(HEADER_RECORDS),
        Stream.runFoldWhile(
          NO_HEADER,
          (h) => !complete(h),
          (h, record) => merge(h, reader.value.header(record))
        )
      )
      // The listing shows what the index would store: secrets in an id or a cwd are redacted.
      return { session_id: redactNullable(header.session_id).text, cwd: redactNullable(header.cwd).text }
    })
  ).pipe(Effect.orElseSucceed(() => NO_HEADER))

/** `blctx explore`: the newest transcripts of every target, active and archived, with what is cheap to know. */
export const listTranscripts = Effect.fn("Explore.list")(function* (
  targets: ReadonlyArray<DiscoveryTarget>,
  limit: number
) {
  const found = yield* discoverTranscripts(targets).pipe(
    Effect.mapError(
      (e) =>
        new ExploreFailure({
          message: `${e.op} ${e.path} failed: ${e.code}`,
          path: e.path,
          remediation: `Check that you can read ${e.path} (looked in ${targets.map((t) => `${t.home}, the ${t.format.label} home`).join("; ")}).`
        })
    )
  )
  const transcripts: Array<TranscriptListing> = []
  for (const file of found.files.slice(0, limit)) {
    const header = yield* readHeader(file.path, file.format)
    transcripts.push({
      ...shownFile(file),
      agent: Option.match(formatById(file.format), { onNone: () => file.format, onSome: (f) => f.agent }),
      ...header
    })
  }
  const result: ExploreListResult = {
    ...discoveryTotals(found),
    limit,
    transcripts
  }
  return result
})
