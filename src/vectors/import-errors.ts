import type { SqlError } from "@effect/sql/SqlError"
import { Data, type ParseResult } from "effect"
import type { TokenizerError } from "../chunking/chunk-tokenizer.js"
import type { EmbedError } from "../embedding/embedder.js"
import type { VectorIndexError } from "./vector-index.js"

/**
 * Why an import or a repair stopped when the fault is not the transcript's: the tokenizer, the
 * model or the store. The job fails with one of these (its message names the cause), and nothing
 * of the file in progress is committed, so the next run imports it again. A transcript that cannot
 * be read is not an error at all: it is a `FileReport` with status `unreadable` (or `missing`).
 */

/** What is being worked on, for a message: a transcript's path, or what a repair was doing. */
type Subject = string

/** Tells what an error was; the error's own message when it has one worth showing. */
const causeText = (cause: unknown): string => {
  if (cause instanceof Error) return cause.name === "Error" ? cause.message : `${cause.name}: ${cause.message}`
  return String(cause)
}

/** Cutting texts into chunks failed: the tokenizer refused, or made no progress for the stall limit. */
export class ChunkingFailed extends Data.TaggedError("ChunkingFailed")<{
  /** The tokenizer id chunks are stored with (`whole-message`, `<repo>@<revision>`). */
  readonly tokenizer: string
  readonly subject: Subject
  readonly message: string
  readonly cause?: TokenizerError
}> {
  static of(tokenizer: string, subject: Subject, cause: TokenizerError): ChunkingFailed {
    return new ChunkingFailed({
      tokenizer,
      subject,
      message: `chunking failed (tokenizer ${tokenizer}, ${cause.path}): ${cause.message}; ${subject}`,
      cause
    })
  }
  static stalled(tokenizer: string, subject: Subject, limit: string): ChunkingFailed {
    return new ChunkingFailed({
      tokenizer,
      subject,
      message: `chunking failed (tokenizer ${tokenizer}): no progress for ${limit}; ${subject}`
    })
  }
}

/** The embedding model failed on accepted texts, or made no progress for the stall limit. */
export class EmbeddingFailed extends Data.TaggedError("EmbeddingFailed")<{
  /** The model's fingerprint label (`<repo>@<revision>#<key>`). */
  readonly model: string
  readonly subject: Subject
  readonly message: string
  readonly cause?: EmbedError
}> {
  static of(model: string, subject: Subject, cause: EmbedError): EmbeddingFailed {
    return new EmbeddingFailed({
      model,
      subject,
      message: `embedding failed (model ${model}, ${cause.folder}): ${cause.message}; ${subject}`,
      cause
    })
  }
  static stalled(model: string, subject: Subject, limit: string): EmbeddingFailed {
    return new EmbeddingFailed({
      model,
      subject,
      message: `embedding failed (model ${model}): no progress for ${limit}; ${subject}`
    })
  }
}

/** What the database can fail with: the driver's error, or a row that does not decode as its schema. */
export type DatabaseFailure = SqlError | ParseResult.ParseError

/**
 * The history database or the vector index refused a read or a write, or a stored row did not
 * decode. `cause` keeps the driver's error chain, so a full disk (SQLITE_FULL) is still
 * recognised as one by the job store.
 */
export class HistoryStoreError extends Data.TaggedError("HistoryStoreError")<{
  /** What was being done: `store the rows of /path.jsonl`, `look up /path.jsonl`, `embed chunks`. */
  readonly action: string
  /** `database` (SQLite) or `vector index`. */
  readonly store: "database" | "vector index"
  readonly message: string
  readonly cause: DatabaseFailure | VectorIndexError
}> {
  static of(action: string, cause: DatabaseFailure | VectorIndexError): HistoryStoreError {
    const store = cause._tag === "VectorIndexError" ? "vector index" : "database"
    return new HistoryStoreError({
      action,
      store,
      message: `the ${store} failed to ${action}: ${detailOf(cause)}`,
      cause
    })
  }
}

const detailOf = (cause: DatabaseFailure | VectorIndexError): string => {
  switch (cause._tag) {
    case "SqlError":
      return cause.cause === undefined ? cause.message : `${cause.message}: ${causeText(cause.cause)}`
    case "ParseError":
      return `a stored row did not have the expected shape: ${cause.message}`
    case "VectorIndexError":
      return `${cause.store}: ${cause.message}`
  }
}

/** Every way importing a file can fail the job (the file being unreadable is not one of them). */
export type ImportFailure = ChunkingFailed | EmbeddingFailed | HistoryStoreError

/** Maps a store failure while doing `action`. */
export const storeFailure =
  (action: string) =>
  (cause: DatabaseFailure | VectorIndexError): HistoryStoreError =>
    HistoryStoreError.of(action, cause)
