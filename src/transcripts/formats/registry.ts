import { Data, Effect, Either, Option } from "effect"
import type { TranscriptFileError, TranscriptHandle } from "../transcript-files.js"
import { claudeFormat } from "./claude-format.js"
import { codexFormat } from "./codex-format.js"
import { geminiFormat } from "./gemini-format.js"
import type { TranscriptFormat } from "./transcript-format.js"

/**
 * Every transcript format this build reads, tried in this order. Supporting another agent is one
 * more entry here (and its `source_type` in `src/history/source-type.ts`).
 */
export const TRANSCRIPT_FORMATS: ReadonlyArray<TranscriptFormat> = [codexFormat, claudeFormat, geminiFormat]

/** An agent's name for people (`claude` → `Claude Code`), from its format: declared once, there. */
export const agentLabel = (agent: string): string => TRANSCRIPT_FORMATS.find((f) => f.agent === agent)?.label ?? agent

/** The agents whose transcripts this build reads, for people: `Codex, Claude Code and Gemini CLI`. */
export const agentLabels = (formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS): string => {
  const labels = formats.map((f) => f.label)
  return labels.length <= 1 ? (labels[0] ?? "") : `${labels.slice(0, -1).join(", ")} and ${labels.at(-1)}`
}

export { agentChoices, agentLabelChoices, orList, transcriptSourceTypes } from "../../domain/agent-choices.js"

/** Where each agent's home is, for help texts: `Codex: $CODEX_HOME, or ~/.codex; Claude Code: …`. */
export const describeHomes = (formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS): string =>
  formats.map((f) => `${f.label}: ${f.homeHint}`).join("; ")

/** Each format's session folders relative to its home: `Codex: sessions and archived_sessions; …`. */
export const describeSessionFolders = (formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS): string =>
  formats
    .map(
      (f) =>
        `${f.label}: ${f
          .sessionFolders("/")
          .map((folder) => folder.path.slice(1))
          .join(" and ")}`
    )
    .join("; ")

/** How much of a file's start `formatFor` is given: enough for any format's first record to show. */
export const PROBE_BYTES = 64 * 1024

/** A file no registered format claims: never imported or explored as if it were one. */
export class UnknownTranscriptFormat extends Data.TaggedError("UnknownTranscriptFormat")<{
  readonly path: string
  readonly message: string
  readonly remediation: string
}> {}

const isEmpty = (head: Uint8Array | string) =>
  typeof head === "string"
    ? head.trim() === ""
    : head.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)

/**
 * The format of a file, from its path and first bytes (the file itself is not read here), or
 * why none claims it. Formats are asked in registry order; the first that claims it wins.
 */
export const formatFor = (
  path: string,
  head: Uint8Array | string,
  formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS
): Either.Either<TranscriptFormat, UnknownTranscriptFormat> => {
  const found = formats.find((format) => format.detect({ path, head }))
  if (found !== undefined) return Either.right(found)
  const why = isEmpty(head) ? "it is empty" : "its name and first line match no transcript format blctx knows"
  return Either.left(
    new UnknownTranscriptFormat({
      path,
      message: `${path} is not a transcript blctx can read: ${why}`,
      remediation: `Give a session file of a supported agent (${formats.map((f) => f.label).join(", ")}). ${formats
        .map((f) => `${f.expects}.`)
        .join(" ")}`
    })
  )
}

/** The format of an open file: its first `PROBE_BYTES` are read through the handle. */
export const formatOfHandle = (
  handle: TranscriptHandle,
  formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS
): Effect.Effect<TranscriptFormat, UnknownTranscriptFormat | TranscriptFileError> =>
  Effect.flatMap(handle.read(0, Math.min(PROBE_BYTES, handle.size)), (head) => formatFor(handle.path, head, formats))

/** A registered format by id (`codex`). */
export const formatById = (
  id: string,
  formats: ReadonlyArray<TranscriptFormat> = TRANSCRIPT_FORMATS
): Option.Option<TranscriptFormat> => Option.fromNullable(formats.find((format) => format.id === id))
